import { describe, expect, it } from 'vitest';
import { PendingItem } from '@agent-auth/contracts';
import type { RequestRow } from './rows.js';
import { currentPendingItem, escalatedPendingItem, toActionView, toPendingItem } from './views.js';

const row: RequestRow = {
  id: 'act_1',
  account_id: 'acc_1',
  agent_id: 'agt_1',
  action_type: 'purchase',
  title: 'Lamp',
  description: 'A desk lamp',
  risk_level: 'high',
  risk_rank: 2,
  reversible: false,
  amount_cents: '4250',
  currency: 'EUR',
  recipient: 'shop@example.com',
  metadata_enc: 'sealed',
  callback_url: 'https://example.com/hook',
  content_hash: 'sha256:abc',
  status: 'pending',
  rule_applied: null,
  resolved_by: null,
  resolved_at: null,
  reason: null,
  spending_limit_exceeded: null,
  created_at: new Date('2026-11-23T10:00:00.000Z'),
  expires_at: new Date('2026-11-23T11:00:00.000Z'),
  request_hash: null,
  policy_version: null,
  receipt: null,
  quorum_required: 2,
  quorum_approvals: [
    { device_id: 'dev_1', member_id: 'mem_1', method: 'totp', at: '2026-11-23T10:01:00.000Z', signed: false },
  ],
  agent_name: 'Shopper',
};

describe('the pending list entry', () => {
  it('is the action view cut to the fields the pending contract names, with the agent name', () => {
    const metadata = { order: 'P-1' };
    const expected = PendingItem.parse({ ...toActionView(row, metadata), agent_name: 'Shopper' });
    const item = toPendingItem({ ...row, agent_name: 'Shopper' }, metadata, row.quorum_approvals);
    expect(item).toEqual(expected);
    // Every field the contract names, but `routing`, which only a routed request's entry has (below).
    expect(Object.keys(item).sort()).toEqual(
      Object.keys(PendingItem.shape)
        .filter((k) => k !== 'routing')
        .sort(),
    );
    expect(item.amount).toBe(42.5);
  });

  it('has no amount and no quorum when the request has neither', () => {
    const item = toPendingItem({ ...row, amount_cents: null, quorum_required: null, agent_name: 'A' }, {}, null);
    expect(item.amount).toBeNull();
    expect(item.amount_cents).toBeNull();
    expect(item.quorum).toBeNull();
  });

  it('is shown with the quorum approvals of the moment, the kept entry left as it was', () => {
    const kept = Object.freeze(toPendingItem({ ...row, agent_name: 'Shopper' }, {}, null));
    expect(kept.quorum).toEqual({ required: 2, approvals: [] });
    const now = currentPendingItem(kept, row.quorum_approvals);
    expect(now.quorum).toEqual({ required: 2, approvals: row.quorum_approvals });
    expect({ ...now, quorum: null }).toEqual({ ...kept, quorum: null });
    expect(kept.quorum?.approvals).toEqual([]);
  });

  it('names no member for an approval stored before accounts had members', () => {
    const stored = [{ device_id: 'dev_1', method: 'totp', at: '2026-11-23T10:01:00.000Z', signed: false }];
    const kept = toPendingItem({ ...row, agent_name: 'Shopper' }, {}, null);
    const now = currentPendingItem(kept, stored as never);
    expect(now.quorum?.approvals).toEqual([{ ...stored[0], member_id: null }]);
  });

  it('is the kept entry itself when the request has no quorum', () => {
    const kept = toPendingItem({ ...row, quorum_required: null, agent_name: 'A' }, {}, null);
    expect(currentPendingItem(kept, null)).toBe(kept);
  });

  it('shows a routed request its routing, and once it escalated, when', () => {
    expect(toPendingItem({ ...row, agent_name: 'A' }, {}, null).routing).toBeUndefined();
    const routed = {
      ...row,
      agent_name: 'A',
      approvers: ['mem_dana'],
      escalate_at: new Date('2026-11-23T10:05:00.000Z'),
      escalate_to: ['role:admin'],
      escalated_at: null,
    };
    const kept = toPendingItem(routed, {}, null);
    expect(kept.routing).toEqual({
      approvers: ['mem_dana'],
      escalate_at: '2026-11-23T10:05:00.000Z',
      escalate_to: ['role:admin'],
      escalated_at: null,
    });
    expect(escalatedPendingItem(kept, null)).toBeNull();
    const escalated = escalatedPendingItem(kept, new Date('2026-11-23T10:05:00.004Z'));
    expect(escalated?.routing?.escalated_at).toBe('2026-11-23T10:05:00.004Z');
    expect(escalatedPendingItem(escalated!, new Date())).toBeNull();
    expect(kept.routing?.escalated_at).toBeNull();
  });
});
