import { describe, expect, it } from 'vitest';
import { CreateActionBody, newActionOf } from '@agent-auth/contracts';
import { amountCentsOf, checkCallbackUrl, contentHashOf, creationAudit, newRequestRow } from './new-action.js';

const body = (fields: Record<string, unknown>) =>
  newActionOf(CreateActionBody.parse({ action_type: 'purchase', title: 'Lamp', ...fields }));
const agent = { account_id: 'acct_1', agent_id: 'agt_1' };

describe('a new action request', () => {
  it('takes https callbacks, and http only to a configured development host', () => {
    expect(() => checkCallbackUrl({ ALLOW_INSECURE_HOSTS: [] }, 'https://example.com/hook')).not.toThrow();
    expect(() => checkCallbackUrl({ ALLOW_INSECURE_HOSTS: [] }, 'http://example.com/hook')).toThrow(
      expect.objectContaining({ code: 'callback_url_not_https', status: 400 }),
    );
    expect(() => checkCallbackUrl({ ALLOW_INSECURE_HOSTS: ['127.0.0.1'] }, 'http://127.0.0.1:9/hook')).not.toThrow();
  });

  it('counts its amount in cents and refuses one that rounds to nothing', () => {
    expect(amountCentsOf(body({ amount: 42.5 }))).toBe(4250);
    expect(amountCentsOf(body({}))).toBeNull();
    expect(() => amountCentsOf(body({ amount: 0.001 }))).toThrow(expect.objectContaining({ code: 'amount_too_small' }));
  });

  it('has a content hash only as a vault execution of type system', () => {
    const call = { vault_execute: true, service_name: 's', method: 'GET', url: 'https://api.example.com/x' };
    expect(contentHashOf(body({}))).toBeNull();
    expect(contentHashOf(body({ action_type: 'system', metadata: call }))).toMatch(/^[0-9a-f]{64}$/);
    expect(() => contentHashOf(body({ metadata: call }))).toThrow(
      expect.objectContaining({ code: 'vault_request_not_system' }),
    );
    expect(() => contentHashOf(body({ action_type: 'system', metadata: { ...call, method: 'BREW' } }))).toThrow(
      expect.objectContaining({ code: 'invalid_request', detail: expect.stringMatching(/^metadata\.method/) }),
    );
  });

  it('is stored as the policy left it, with the audit of its creation and of the automatic decision', () => {
    const prepared = {
      id: 'act_1',
      agent,
      action: body({ amount: 5 }),
      amountCents: 500,
      contentHash: null,
      metadataEnc: null,
    };
    const rule = {
      outcome: 'approved' as const,
      resolved_by: 'rule:small',
      rule_applied: 'small',
      spend_recorded: true,
    };
    expect(newRequestRow(prepared, { outcome: 'pending' })).toMatchObject({ status: 'pending', resolved: false });
    expect(newRequestRow(prepared, rule)).toMatchObject({ status: 'approved', rule_applied: 'small', resolved: true });
    expect(creationAudit(prepared, { outcome: 'pending' }).map((e) => e.event)).toEqual(['created']);
    expect(creationAudit(prepared, rule)).toEqual([
      expect.objectContaining({ event: 'created', actor: 'agent:agt_1' }),
      { event: 'approved', actor: 'rule:small', detail: { rule_applied: 'small' } },
    ]);
  });
});
