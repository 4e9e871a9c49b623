import type { ActionView } from '@agent-auth/contracts';
import { describe, expect, it } from 'vitest';
import {
  accessTokenClaims,
  approvedDetailOf,
  checkApproved,
  checkNotificationEndpoint,
  idTokenClaims,
  leftHalfHash,
  nextInterval,
} from './ciba.js';

const action = {
  id: 'act_1',
  agent_id: 'agt_1',
  status: 'approved',
  action_type: 'purchase',
  title: 'Buy a book',
  description: null,
  risk_level: 'medium',
  reversible: true,
  amount: 12.5,
  amount_cents: 1250,
  currency: 'EUR',
  recipient: null,
  metadata: { binding_message: 'B-1', isbn: '978' },
  callback_url: null,
  content_hash: null,
  rule_applied: null,
  resolved_by: 'device:ref',
  resolved_at: '2026-11-29T01:00:00.000Z',
  reason: null,
  created_at: '2026-11-29T00:59:00.000Z',
  expires_at: '2026-11-29T01:04:00.000Z',
  user_verified: false,
  passkey_id: null,
  receipt: null,
  quorum: null,
} satisfies ActionView;

describe('CIBA rules', () => {
  it('takes https endpoints, http only to a development host, never a fragment', () => {
    const settings = { ALLOW_INSECURE_HOSTS: ['127.0.0.1'] };
    expect(() => checkNotificationEndpoint(settings, 'https://agent.example/ping')).not.toThrow();
    expect(() => checkNotificationEndpoint(settings, 'http://127.0.0.1:8080/ping')).not.toThrow();
    for (const bad of ['http://agent.example/ping', 'https://agent.example/p#x', 'ftp://a/b', 'nope', 'https://a/#'])
      expect(() => checkNotificationEndpoint(settings, bad), bad).toThrow(/https URL without a fragment/);
  });

  it('answers a poll by status: tokens once approved, the CIBA errors otherwise', () => {
    expect(() => checkApproved('approved', true, 10)).not.toThrow();
    expect(() => checkApproved('pending', false, 5)).toThrow(
      expect.objectContaining({ code: 'authorization_pending' }),
    );
    expect(() => checkApproved('pending', true, 10)).toThrow(expect.objectContaining({ code: 'slow_down' }));
    expect(() => checkApproved('expired', false, 5)).toThrow(expect.objectContaining({ code: 'expired_token' }));
    for (const status of ['denied', 'cancelled'] as const)
      expect(() => checkApproved(status, false, 5)).toThrow(expect.objectContaining({ code: 'access_denied' }));
    expect(nextInterval(5, true)).toBe(10);
    expect(nextInterval(5, false)).toBe(5);
  });

  it('carries the approved request without its caption, with an edited input in place of the asked one', () => {
    expect(approvedDetailOf(action)).toEqual({
      type: 'agent_action',
      action_type: 'purchase',
      title: 'Buy a book',
      amount: 12.5,
      currency: 'EUR',
      risk_level: 'medium',
      metadata: { isbn: '978' },
      action_id: 'act_1',
    });
    const edited = approvedDetailOf({ ...action, metadata: { tool_input: { a: 1 } }, updated_input: { a: 2 } });
    expect(edited.metadata).toEqual({ tool_input: { a: 2 } });
  });

  it("binds the ID token to the access token (at_hash) and names the decision's time", () => {
    // SHA-256("abc") is ba7816bf…f20015ad (FIPS 180-2); at_hash is its left 16 bytes, base64url.
    expect(leftHalfHash('abc')).toBe(Buffer.from('ba7816bf8f01cfea414140de5dae2223', 'hex').toString('base64url'));
    const facts = {
      issuer: 'https://x',
      clientId: 'agt_1',
      subject: 'acc_1',
      authReqId: 'r',
      action,
      now: 100,
      jti: 'j',
    };
    const access = accessTokenClaims(facts, [approvedDetailOf(action)]);
    expect(access).toMatchObject({ iss: 'https://x', aud: 'agt_1', sub: 'acc_1', exp: 400, action_id: 'act_1' });
    const id = idTokenClaims(facts, 'token');
    expect(id).toMatchObject({
      aud: 'agt_1',
      auth_time: Date.parse(action.resolved_at) / 1000,
      at_hash: leftHalfHash('token'),
      'urn:openid:params:jwt:claim:auth_req_id': 'r',
    });
  });
});
