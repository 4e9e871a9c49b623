import { describe, expect, it } from 'vitest';
import { ActionEvent } from '@agent-auth/contracts';
import { pushMessageOf, requestLink } from './push-messages.js';

const at = '2026-11-23T08:00:00.000Z';
function event(type: 'action.created' | 'action.resolved', action: Partial<ActionEvent['action']> = {}): ActionEvent {
  return ActionEvent.parse({
    id: 'msg_1',
    type,
    account_id: 'acc_1',
    agent_id: 'agt_1',
    callback_url: null,
    occurred_at: at,
    action: {
      id: 'act_42',
      status: 'pending',
      action_type: 'data_access',
      title: 'Read the ledger',
      risk_level: 'high',
      amount: 1250.5,
      currency: 'USD',
      resolved_by: null,
      resolved_at: null,
      created_at: at,
      expires_at: '2026-11-23T08:05:00.000Z',
      ...action,
    },
  });
}

describe('push messages', () => {
  it('tells of a new pending request with its title, amount and risk, linked to the request and tagged by it', () => {
    const message = pushMessageOf(event('action.created'))!;
    expect(message.title).toBe('Approval requested: Read the ledger');
    expect(message.body).toBe('$1,250.50 · high risk · data access');
    expect(message.data).toMatchObject({
      type: 'action.created',
      request_id: 'act_42',
      url: '/app/#/requests/act_42',
      tag: 'request:act_42',
      expires_at: '2026-11-23T08:05:00.000Z',
    });
    expect(pushMessageOf(event('action.created', { amount: null }))!.body).toBe('high risk · data access');
  });

  it('tells of the outcome of a request that was pending (same tag), but not of one decided at its creation', () => {
    const resolved = pushMessageOf(
      event('action.resolved', {
        status: 'approved',
        resolved_by: 'biometric',
        resolved_at: '2026-11-23T08:01:00.000Z',
      }),
    )!;
    expect(resolved.title).toBe('Approved: Read the ledger');
    expect(resolved.data).toMatchObject({ type: 'action.resolved', tag: 'request:act_42', status: 'approved' });
    const expired = pushMessageOf(
      event('action.resolved', { status: 'expired', resolved_by: 'system', resolved_at: '2026-11-23T08:05:01.000Z' }),
    )!;
    expect(expired.body).toBe('No one answered in time');
    expect(
      pushMessageOf(event('action.resolved', { status: 'approved', resolved_by: 'rule', resolved_at: at })),
    ).toBeNull();
  });

  it('escapes the id in the link', () => {
    expect(requestLink('act_a/b')).toBe('/app/#/requests/act_a%2Fb');
  });
});
