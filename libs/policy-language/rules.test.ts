import { describe, expect, it } from 'vitest';
import type { RequestFacts as ActionFacts } from './facts.js';
import { firstMatchingRule, type RuleCriteria, ruleMatches } from './rules.js';

const any: RuleCriteria = { action_type: null, agent_id: null, risk_level_max: null, amount_max_cents: null };
const action: ActionFacts = { action_type: 'purchase', agent_id: 'agt_a', risk_level: 'medium', amount_cents: 1000 };

describe('ruleMatches', () => {
  it('matches everything when the rule sets no field', () => {
    expect(ruleMatches(any, action)).toBe(true);
    expect(ruleMatches(any, { ...action, amount_cents: null })).toBe(true);
  });

  it('needs action_type and agent_id to be equal when set', () => {
    expect(ruleMatches({ ...any, action_type: 'purchase' }, action)).toBe(true);
    expect(ruleMatches({ ...any, action_type: 'legal' }, action)).toBe(false);
    expect(ruleMatches({ ...any, agent_id: 'agt_a' }, action)).toBe(true);
    expect(ruleMatches({ ...any, agent_id: 'agt_b' }, action)).toBe(false);
  });

  it('matches risk at or below risk_level_max', () => {
    const rule = { ...any, risk_level_max: 'medium' as const };
    expect(ruleMatches(rule, { ...action, risk_level: 'low' })).toBe(true);
    expect(ruleMatches(rule, { ...action, risk_level: 'medium' })).toBe(true);
    expect(ruleMatches(rule, { ...action, risk_level: 'high' })).toBe(false);
    expect(ruleMatches(rule, { ...action, risk_level: 'critical' })).toBe(false);
    expect(ruleMatches({ ...any, risk_level_max: 'low' }, { ...action, risk_level: 'low' })).toBe(true);
    expect(ruleMatches({ ...any, risk_level_max: 'critical' }, { ...action, risk_level: 'critical' })).toBe(true);
  });

  it('matches amount_cents at or below amount_max_cents, and never an action without an amount', () => {
    const rule = { ...any, amount_max_cents: 1000 };
    expect(ruleMatches(rule, { ...action, amount_cents: 999 })).toBe(true);
    expect(ruleMatches(rule, { ...action, amount_cents: 1000 })).toBe(true);
    expect(ruleMatches(rule, { ...action, amount_cents: 1001 })).toBe(false);
    expect(ruleMatches(rule, { ...action, amount_cents: null })).toBe(false);
    expect(ruleMatches({ ...any, amount_max_cents: 0 }, { ...action, amount_cents: null })).toBe(false);
  });

  it('needs every set field to match', () => {
    const rule: RuleCriteria = {
      action_type: 'purchase',
      agent_id: 'agt_a',
      risk_level_max: 'high',
      amount_max_cents: 5000,
    };
    expect(ruleMatches(rule, action)).toBe(true);
    expect(ruleMatches(rule, { ...action, agent_id: 'agt_b' })).toBe(false);
    expect(ruleMatches(rule, { ...action, action_type: 'social' })).toBe(false);
    expect(ruleMatches(rule, { ...action, risk_level: 'critical' })).toBe(false);
    expect(ruleMatches(rule, { ...action, amount_cents: 5001 })).toBe(false);
  });
});

describe('firstMatchingRule', () => {
  it('takes the first match in the order given (creation order), not the most specific one', () => {
    const rules = [
      { ...any, name: 'legal only', action_type: 'legal' },
      { ...any, name: 'small', amount_max_cents: 2000 },
      { ...any, name: 'purchases of agt_a', action_type: 'purchase', agent_id: 'agt_a' },
    ];
    expect(firstMatchingRule(rules, action)?.name).toBe('small');
    expect(firstMatchingRule(rules, { ...action, amount_cents: 3000 })?.name).toBe('purchases of agt_a');
    expect(firstMatchingRule(rules, { ...action, amount_cents: 3000, agent_id: 'agt_z' })).toBeUndefined();
    expect(firstMatchingRule([], action)).toBeUndefined();
  });
});
