import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, catalogue, errors } from './index.js';

const reference = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

describe('the error catalogue', () => {
  it('has one stable snake_case code per entry', () => {
    const codes = catalogue.map((e) => e.code);
    for (const code of codes) expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('documents every code with its status in docs/errors.md', () => {
    for (const { code, status } of catalogue)
      expect(reference).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });

  it('builds errors that carry the code, the status and the detail of their template', () => {
    const err = errors.actionNotPending('denied');
    expect(err).toBeInstanceOf(AppError);
    expect(err.toBody()).toEqual({ code: 'action_not_pending', detail: "Action request is 'denied', not pending" });
    expect(err.status).toBe(409);
    expect(errors.actionNotPending.code).toBe('action_not_pending');
  });
});
