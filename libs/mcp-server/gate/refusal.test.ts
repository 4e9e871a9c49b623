import { describe, expect, it } from 'vitest';
import { refusalText } from './refusal.js';

const action = (status: string, reason: string | null = null) =>
  ({ id: 'act_1', status, reason, resolved_by: 'biometric' }) as Parameters<typeof refusalText>[0]['action'];
const refusal = (a: ReturnType<typeof action>, timedOut = false) =>
  refusalText({ action: a, timedOut, toolName: 'write_file', timeoutSeconds: 120 });

describe('refusalText', () => {
  it('is null for an approved call', () => {
    expect(refusal(action('approved'))).toBeNull();
  });

  it("carries the holder's reason for a denial", () => {
    expect(refusal(action('denied', 'not that file'))).toBe(
      'The call of write_file was denied: not that file. The tool was not run. (agent-auth request act_1)',
    );
    expect(refusal(action('denied'))).toMatch(/^The call of write_file was denied \(no reason given\)\./);
  });

  it('says nobody answered in time for a time-out or an expiry', () => {
    const expected =
      'Nobody approved the call of write_file within 120 s, so the tool was not run. (agent-auth request act_1)';
    expect(refusal(action('cancelled'), true)).toBe(expected);
    expect(refusal(action('expired'))).toBe(expected);
    expect(refusal(action('pending'), true)).toBe(expected);
  });

  it('says a request withdrawn by someone else was withdrawn', () => {
    expect(refusal(action('cancelled'))).toMatch(/withdrawn \(cancelled\), so the tool was not run/);
  });
});
