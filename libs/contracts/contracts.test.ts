import { describe, expect, it } from 'vitest';
import {
  unpairedSurrogatePath,
  ActionEvent,
  actionOfSnapshot,
  outcomeOfSnapshot,
  ApproveBody,
  CreateActionBody,
  CreateRuleBody,
  describeZodError,
  idPrefixes,
  timePrefix,
  ListActionsQuery,
  newId,
  riskRank,
} from './index.js';

describe('CreateActionBody', () => {
  it('fills the defaults of a new action request', () => {
    expect(CreateActionBody.parse({ action_type: 'purchase', title: 'Buy' })).toMatchObject({
      risk_level: 'medium',
      reversible: true,
      currency: 'USD',
      expires_in_seconds: 300,
    });
  });

  it('names the offending field, and says "is required" for a missing one', () => {
    const missing = CreateActionBody.safeParse({ title: 'x' });
    expect(describeZodError(missing.error!, 'body', { title: 'x' })).toBe('action_type: is required');
    const long = CreateActionBody.safeParse({ action_type: 'legal', title: 'x'.repeat(201) });
    expect(describeZodError(long.error!)).toMatch(/^title: too big/);
  });

  it('measures metadata in bytes of JSON, not characters', () => {
    const multibyte = { note: 'é'.repeat(4100) }; // 8200 bytes of UTF-8, though only 4100 characters
    expect(CreateActionBody.safeParse({ action_type: 'social', title: 't', metadata: multibyte }).success).toBe(false);
    expect(
      CreateActionBody.safeParse({ action_type: 'social', title: 't', metadata: { note: 'e'.repeat(8000) } }).success,
    ).toBe(true);
  });
});

describe('ListActionsQuery', () => {
  it('coerces the limit from the query string and bounds it to 1..200', () => {
    expect(ListActionsQuery.parse({}).limit).toBe(50);
    expect(ListActionsQuery.parse({ limit: '7' }).limit).toBe(7);
    expect(ListActionsQuery.safeParse({ limit: '201' }).success).toBe(false);
    expect(ListActionsQuery.safeParse({ limit: '1.5' }).success).toBe(false);
  });
});

describe('identifiers and ranks', () => {
  it('makes prefixed ids of base62 characters', () => {
    expect(newId('action')).toMatch(/^act_[0-9A-Za-z]{20}$/);
    expect(newId('webhookMessage')).toMatch(/^msg_[0-9A-Za-z]{20}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newId('limit'))).size).toBe(1000);
  });

  it('begins a request id with the time it was made, so that ids sort as their times under any collation', async () => {
    const times = [0, 35, 36, 1_295, 1_296, 1_795_000_000_123, 1_795_000_000_124, 36 ** 9 - 1];
    const prefixes = times.map(timePrefix);
    expect(prefixes).toEqual([
      '000000000',
      '00000000z',
      '000000010',
      '0000000zz',
      '000000100',
      '0mwm0nkaj',
      '0mwm0nkak',
      'zzzzzzzzz',
    ]);
    const sortedBy = (compare: (a: string, b: string) => number) => [...prefixes].reverse().sort(compare);
    expect(sortedBy((a, b) => (a < b ? -1 : 1))).toEqual(prefixes);
    expect(sortedBy((a, b) => a.localeCompare(b, 'en'))).toEqual(prefixes);
    const first = newId('action');
    await new Promise((resolve) => setTimeout(resolve, 3));
    const later = newId('action');
    expect(first.slice(4, 13)).toBe(timePrefix(Number.parseInt(first.slice(4, 13), 36)));
    expect(first < later).toBe(true);
    // The rest is random: ids made within the same milliseconds differ.
    expect(new Set(Array.from({ length: 20_000 }, () => newId('action'))).size).toBe(20_000);
  });

  it('keeps every id that is a credential, or names one, wholly random', () => {
    const kinds = ['device', 'apiKey', 'webhookSecret', 'credential', 'executionClaim', 'passkey'] as const;
    for (const kind of kinds) {
      const ids = Array.from({ length: 50 }, () =>
        newId(kind).slice(idPrefixes[kind].length, idPrefixes[kind].length + 9),
      );
      expect(new Set(ids).size, kind).toBe(50);
    }
  });

  it('ranks risk from low to critical', () => {
    expect(['low', 'medium', 'high', 'critical'].map((r) => riskRank(r as never))).toEqual([0, 1, 2, 3]);
  });
});

describe('standing grants and quorum rules', () => {
  it('bounds a grant to 60 s - 30 days, a positive budget and at least one use, naming the field', () => {
    const detail = (grant: unknown) => {
      const r = ApproveBody.safeParse({ grant });
      return r.success ? 'ok' : describeZodError(r.error, 'body', { grant });
    };
    expect(detail({ duration_seconds: 60 })).toBe('ok');
    expect(detail({ duration_seconds: 2_592_000, max_amount: 0.01, max_uses: 1 })).toBe('ok');
    expect(detail({ duration_seconds: 59 })).toMatch(/^grant\.duration_seconds: must be 60 to 2592000 seconds/);
    expect(detail({ duration_seconds: 2_592_001 })).toMatch(/^grant\.duration_seconds: /);
    expect(detail({})).toBe('grant.duration_seconds: is required');
    expect(detail({ duration_seconds: 60, max_amount: 0 })).toMatch(/^grant\.max_amount: /);
    expect(detail({ duration_seconds: 60, max_amount: 0.001 })).toMatch(/^grant\.max_amount: /);
    expect(detail({ duration_seconds: 60, max_uses: 0 })).toMatch(/^grant\.max_uses: /);
  });

  it('asks a quorum of 2 to 10 with require_quorum, and none with other decisions', () => {
    const rule = (body: Record<string, unknown>) => CreateRuleBody.safeParse({ name: 'q', ...body });
    expect(rule({ decision: 'require_quorum', quorum: 2 }).data).toMatchObject({ quorum: 2 });
    expect(rule({ decision: 'require_quorum', quorum: 10 }).success).toBe(true);
    expect(rule({ decision: 'auto_approve' }).data).toMatchObject({ quorum: null });
    for (const bad of [
      { decision: 'require_quorum' },
      { decision: 'require_quorum', quorum: 1 },
      { decision: 'require_quorum', quorum: 11 },
      { decision: 'auto_deny', quorum: 3 },
    ]) {
      const r = rule(bad);
      expect(r.success, JSON.stringify(bad)).toBe(false);
      expect(describeZodError(r.error!)).toMatch(/^quorum: /);
    }
  });

  it('routes ask and quorum rules to approvers, escalating after 5 s to 1 day, and nothing else', () => {
    const rule = (body: Record<string, unknown>) => CreateRuleBody.safeParse({ name: 'r', ...body });
    const routed = {
      approvers: ['mem_a1', 'role:admin', 'mem_a1'],
      escalate_after_seconds: 5,
      escalate_to: ['role:owner'],
    };
    expect(rule({ decision: 'ask', ...routed }).data).toMatchObject({
      decision: 'ask',
      approvers: ['mem_a1', 'role:admin'],
      escalate_after_seconds: 5,
      escalate_to: ['role:owner'],
    });
    expect(rule({ decision: 'require_quorum', quorum: 2, ...routed, escalate_after_seconds: 86_400 }).success).toBe(
      true,
    );
    expect(rule({ decision: 'ask' }).data).toMatchObject({ approvers: null, escalate_to: null });
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ decision: 'auto_approve', approvers: ['mem_a1'] }, /^approvers: is only for decision ask/],
      [{ decision: 'auto_deny', escalate_after_seconds: 5, escalate_to: ['mem_a1'] }, /^escalate_after_seconds: /],
      [{ decision: 'ask', approvers: ['role:auditor'] }, /^approvers\[0\]: must be a member id/],
      [{ decision: 'ask', approvers: ['dana'] }, /^approvers\[0\]: /],
      [{ decision: 'ask', approvers: [] }, /^approvers: must name at least one/],
      [
        { decision: 'ask', escalate_after_seconds: 4, escalate_to: ['mem_a1'] },
        /^escalate_after_seconds: must be 5 to 86400/,
      ],
      [{ decision: 'ask', escalate_after_seconds: 86_401, escalate_to: ['mem_a1'] }, /^escalate_after_seconds: /],
      [
        { decision: 'ask', escalate_after_seconds: 60 },
        /^escalate_to: escalate_after_seconds and escalate_to go together/,
      ],
      [{ decision: 'ask', escalate_to: ['mem_a1'] }, /^escalate_after_seconds: /],
    ];
    for (const [bad, message] of refusals) {
      const r = rule(bad);
      expect(r.success, JSON.stringify(bad)).toBe(false);
      expect(describeZodError(r.error!), JSON.stringify(bad)).toMatch(message);
    }
  });
});

describe('the outcome of a resolution event', () => {
  const snapshot = {
    id: 'act_1',
    status: 'denied' as const,
    action_type: 'purchase' as const,
    title: 't',
    risk_level: 'low' as const,
    amount_cents: 500,
    currency: 'USD',
    resolved_by: 'biometric',
    resolved_at: '2026-01-01T00:00:00.123456+00:00',
    created_at: '2026-01-01T00:00:00+00:00',
    expires_at: '2026-01-01T01:00:00+00:00',
    receipt: 'r',
    reason: 'too dear',
    user_verified: true,
    passkey_id: 'pk_1',
    quorum_required: null,
    quorum_approvals: [],
  };
  const event = (outcome: unknown) => ({
    id: 'msg_1',
    type: 'action.resolved',
    account_id: 'acc_1',
    agent_id: 'agt_1',
    callback_url: null,
    occurred_at: '2026-01-01T00:00:00Z',
    action: actionOfSnapshot(snapshot),
    outcome,
  });

  it("is made of a resolution's snapshot, and not of a creation's or an older snapshot's", () => {
    expect(outcomeOfSnapshot(snapshot)).toEqual({
      reason: 'too dear',
      user_verified: true,
      passkey_id: 'pk_1',
      quorum: null,
    });
    expect(outcomeOfSnapshot({ ...snapshot, status: 'pending' })).toBeUndefined();
    const { reason, user_verified, passkey_id, quorum_required, quorum_approvals, ...older } = snapshot;
    expect(outcomeOfSnapshot(older)).toBeUndefined();
  });

  it('is dropped, not the event, when it does not parse', () => {
    expect(ActionEvent.parse(event(outcomeOfSnapshot(snapshot))).outcome?.reason).toBe('too dear');
    const parsed = ActionEvent.safeParse(event({ reason: 1 }));
    expect(parsed.success).toBe(true);
    expect(parsed.data?.outcome).toBeUndefined();
  });
});

describe('unpairedSurrogatePath', () => {
  it('names the first string or key holding a surrogate without its other half, and passes paired ones', () => {
    const check = (text: string) => unpairedSurrogatePath(text, JSON.parse(text));
    expect(check('{"a":"\\ud800"}')).toBe('a');
    expect(check('{"a":{"b":["x","\\udc00"]}}')).toBe('a.b.1');
    expect(check('{"k\\ud83d":1}')).toBe('k\\ud83d');
    expect(check('"\\udfff"')).toBe('body');
    expect(check('{"a":"\\ud83d\\ude00","b":"😀","c":"\\\\ud800"}')).toBeNull();
    expect(check('{"a":"plain"}')).toBeNull();
  });
});
