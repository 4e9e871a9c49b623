import { describe, expect, it } from 'vitest';
import { firstExceededLimit, limitApplies, summarize } from './limit-checks.js';

describe('limitApplies', () => {
  const action = { agent_id: 'agt_a', action_type: 'purchase' };
  it('covers all agents and types when unset, and only the named ones when set', () => {
    expect(limitApplies({ agent_id: null, action_type: null }, action)).toBe(true);
    expect(limitApplies({ agent_id: 'agt_a', action_type: null }, action)).toBe(true);
    expect(limitApplies({ agent_id: 'agt_b', action_type: null }, action)).toBe(false);
    expect(limitApplies({ agent_id: null, action_type: 'purchase' }, action)).toBe(true);
    expect(limitApplies({ agent_id: null, action_type: 'social' }, action)).toBe(false);
    expect(limitApplies({ agent_id: 'agt_a', action_type: 'social' }, action)).toBe(false);
  });
});

describe('firstExceededLimit', () => {
  const standing = (id: string, limit: number, spent: number) => ({
    limit: id,
    limit_cents: limit,
    spent_cents: spent,
  });
  it('allows reaching a limit exactly and refuses one cent past it', () => {
    expect(firstExceededLimit([standing('a', 10_000, 9_000)], 1_000)).toBeUndefined();
    expect(firstExceededLimit([standing('a', 10_000, 9_000)], 1_001)?.limit).toBe('a');
    expect(firstExceededLimit([standing('a', 10_000, 0)], 10_000)).toBeUndefined();
  });
  it('names the first exceeded limit in the order given', () => {
    const standings = [standing('loose', 100_000, 0), standing('tight', 500, 0), standing('tighter', 100, 0)];
    expect(firstExceededLimit(standings, 600)?.limit).toBe('tight');
    expect(firstExceededLimit([], 600)).toBeUndefined();
  });
});

describe('summarize', () => {
  it('gives dollars, remaining never below zero, and utilization as a fraction', () => {
    expect(summarize(10_000, 2_500)).toEqual({ limit: 100, spent: 25, remaining: 75, utilization: 0.25 });
    expect(summarize(10_000, 0)).toEqual({ limit: 100, spent: 0, remaining: 100, utilization: 0 });
    expect(summarize(10_000, 12_000)).toEqual({ limit: 100, spent: 120, remaining: 0, utilization: 1.2 });
  });
});
