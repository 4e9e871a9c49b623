import { describe, expect, it } from 'vitest';
import type { RequestFacts } from '@agent-auth/policy-language';
import type { HistoryRow } from './replay.js';
import { createKindTallies, suggestedRuleOf, summaryOf } from './rule-suggestions.js';

let seq = 0;
function decided(status: 'approved' | 'denied', facts: Partial<RequestFacts>): [HistoryRow, RequestFacts] {
  const f: RequestFacts = {
    action_type: 'system',
    agent_id: 'agt_a',
    risk_level: 'low',
    amount_cents: null,
    currency: 'USD',
    ...facts,
  };
  const row = { id: `act_${++seq}`, status, created_at: new Date(1_800_000_000_000 - seq * 1000) } as HistoryRow;
  return [row, f];
}

describe('rule suggestions', () => {
  it('come from kinds a person decided at least 5 times, always the same way, best supported first', () => {
    const kinds = createKindTallies();
    const add = (n: number, status: 'approved' | 'denied', f: Partial<RequestFacts>) => {
      for (let i = 0; i < n; i++) kinds.add(...decided(status, f));
    };
    add(37, 'approved', { metadata: { tool_name: 'Read' } });
    add(4, 'approved', { metadata: { tool_name: 'Bash' } });
    add(1, 'denied', { metadata: { tool_name: 'Bash' } });
    add(4, 'approved', { metadata: { tool_name: 'Grep' } }); // too few
    add(6, 'denied', { action_type: 'purchase', recipient: 'Shady Goods Ltd', amount_cents: 900 });
    add(5, 'approved', {
      action_type: 'purchase',
      agent_id: 'agt_b',
      recipient: 'Paper Co',
      amount_cents: 1200,
      risk_level: 'medium',
    });
    add(1, 'approved', { action_type: 'purchase', agent_id: 'agt_b', recipient: 'Paper Co', amount_cents: 400 });
    const found = kinds.unanimous();
    expect(found.map((t) => [t.kind.tool_name ?? t.kind.recipient, t.approved, t.denied])).toEqual([
      ['Read', 37, 0],
      ['Shady Goods Ltd', 0, 6],
      ['Paper Co', 6, 0],
    ]);
    expect(suggestedRuleOf(found[0]!, 'Claude Code')).toEqual({
      name: 'Approve Read calls of Claude Code',
      decision: 'auto_approve',
      action_type: 'system',
      agent_id: 'agt_a',
      risk_level_max: 'low',
      amount_max_cents: null,
      conditions: [{ field: 'tool_name', op: 'eq', value: 'Read' }],
    });
    expect(summaryOf(found[0]!, 'Claude Code', 30)).toBe(
      '37 of 37 Read calls of Claude Code approved by a person in 30 days',
    );
    expect(suggestedRuleOf(found[1]!, null)).toMatchObject({
      name: 'Deny purchase requests of agt_a to Shady Goods Ltd',
      decision: 'auto_deny',
      risk_level_max: null,
      amount_max_cents: null,
      conditions: [{ field: 'recipient', op: 'eq', value: 'Shady Goods Ltd' }],
    });
    // An approving draft goes no riskier and no larger than what was approved.
    expect(suggestedRuleOf(found[2]!, 'Buyer')).toMatchObject({ risk_level_max: 'medium', amount_max_cents: 1200 });
  });
});
