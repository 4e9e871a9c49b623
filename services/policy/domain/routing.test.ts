import { describe, expect, it } from 'vitest';
import { momentOf } from '@agent-auth/policy-language';
import { type RoutingRule, routingOf } from './routing.js';

const noon = momentOf(new Date('2026-03-02T12:00:00Z'), 'UTC');
const facts = {
  action_type: 'purchase',
  agent_id: 'agt_1',
  risk_level: 'medium' as const,
  amount_cents: 5000,
  currency: 'USD',
};
const rule = (over: Partial<RoutingRule>): RoutingRule => ({
  action_type: null,
  agent_id: null,
  risk_level_max: null,
  amount_max_cents: null,
  conditions: null,
  approvers: null,
  escalate_after_seconds: null,
  escalate_to: null,
  ...over,
});

describe('routing of a request left to people', () => {
  it('is absent when no matching rule names approvers or an escalation', () => {
    expect(routingOf([], facts, noon)).toBeUndefined();
    expect(routingOf([rule({ action_type: 'legal', approvers: ['mem_a'] })], facts, noon)).toBeUndefined();
  });

  it('takes the approvers of the first matching rule that names them, skipping rules that do not match', () => {
    const rules = [
      rule({ action_type: 'legal', approvers: ['mem_legal'] }),
      rule({ amount_max_cents: 100, approvers: ['mem_small'] }),
      rule({ action_type: 'purchase', approvers: ['role:admin', 'mem_fin'] }),
      rule({ approvers: ['mem_late'] }),
    ];
    expect(routingOf(rules, facts, noon)).toEqual({
      approvers: ['role:admin', 'mem_fin'],
      escalate_after_seconds: null,
      escalate_to: null,
    });
  });

  it('takes the escalation of the first matching rule that has one, which need not name approvers', () => {
    const rules = [
      rule({ escalate_after_seconds: 60, escalate_to: ['role:owner'] }),
      rule({ approvers: ['mem_fin'], escalate_after_seconds: 5, escalate_to: ['mem_other'] }),
    ];
    expect(routingOf(rules, facts, noon)).toEqual({
      approvers: ['mem_fin'],
      escalate_after_seconds: 60,
      escalate_to: ['role:owner'],
    });
    expect(routingOf(rules.slice(0, 1), facts, noon)).toEqual({
      approvers: null,
      escalate_after_seconds: 60,
      escalate_to: ['role:owner'],
    });
  });
});
