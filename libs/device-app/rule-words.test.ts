import { describe, expect, it } from 'vitest';
// The browser module itself, run in Node: the same code the device app runs.
import { changeWords, conditionOf, conditionWords, opsFor, replaySentence, ruleSentence } from './public/rule-words.js';

describe('rules in words', () => {
  it('says a condition as a person would read it', () => {
    expect(conditionWords({ field: 'recipient', op: 'suffix', value: '@ourcompany.com' })).toBe(
      'recipient ends with “@ourcompany.com”',
    );
    expect(conditionWords({ field: 'tool_name', op: 'in', value: ['Read', 'Grep'] })).toBe(
      'tool is one of “Read”, “Grep”',
    );
    expect(conditionWords({ field: 'local_hour', op: 'lt', value: 6 })).toBe('hour is before 06:00');
    expect(conditionWords({ field: 'amount', op: 'lte', value: 20 })).toBe('amount is at most 20.00');
    expect(conditionWords({ field: 'metadata.env', op: 'neq', value: 'prod' })).toBe('metadata “env” is not “prod”');
    expect(conditionWords({ field: 'weekday', op: 'in', value: ['sat', 'sun'] })).toBe(
      'day of the week is one of “sat”, “sun”',
    );
  });

  it('says a rule in one sentence', () => {
    const names = new Map([['agt_1', 'Claude Code']]);
    expect(
      ruleSentence(
        {
          decision: 'auto_approve',
          action_type: 'system',
          agent_id: 'agt_1',
          risk_level_max: 'medium',
          amount_max_cents: null,
          conditions: [
            { field: 'tool_name', op: 'eq', value: 'Bash' },
            { field: 'title', op: 'glob', value: 'Run: git *' },
          ],
        },
        names,
      ),
    ).toBe(
      'Approve system requests of Claude Code (risk up to medium) when tool is “Bash” and title matches “Run: git *”',
    );
    expect(ruleSentence({ decision: 'auto_deny', amount_max_cents: 1250 })).toBe('Deny every request (up to 12.50)');
    expect(ruleSentence({ decision: 'require_quorum', quorum: 3, action_type: 'legal' })).toBe(
      'Ask 3 people for legal requests',
    );
  });

  it('offers the operators a field takes', () => {
    expect(opsFor('amount').map((o) => o.value)).toEqual(['eq', 'neq', 'in', 'not_in', 'lt', 'lte', 'gt', 'gte']);
    expect(opsFor('recipient').map((o) => o.value)).toContain('glob');
    expect(opsFor('recipient').map((o) => o.value)).not.toContain('lt');
    expect(opsFor('metadata.team').map((o) => o.value)).toHaveLength(12);
    expect(opsFor('local_hour').find((o) => o.value === 'gte')?.label).toBe('is at or after');
  });

  it('builds a condition from what was typed, or says what is missing', () => {
    expect(conditionOf({ field: 'tool_name', op: 'in', raw: 'Read, Grep ,' })).toEqual({
      condition: { field: 'tool_name', op: 'in', value: ['Read', 'Grep'] },
    });
    expect(conditionOf({ field: 'amount', op: 'lt', raw: '20.5' })).toEqual({
      condition: { field: 'amount', op: 'lt', value: 20.5 },
    });
    expect(conditionOf({ field: 'metadata', key: 'retries', op: 'gt', raw: '3' })).toEqual({
      condition: { field: 'metadata.retries', op: 'gt', value: 3 },
    });
    expect(conditionOf({ field: 'metadata', key: 'env', op: 'eq', raw: '3' })).toEqual({
      condition: { field: 'metadata.env', op: 'eq', value: '3' },
    });
    expect(conditionOf({ field: 'metadata', key: ' ', op: 'eq', raw: 'x' })).toEqual({
      error: 'name the metadata key',
    });
    expect(conditionOf({ field: 'recipient', op: 'eq', raw: '  ' })).toEqual({ error: 'give a value for recipient' });
  });

  it('says what a replay found', () => {
    const view = { days: 30, evaluated: 480, approve: 214, deny: 3, pending: 263, changed_total: 3, changed: [] };
    expect(replaySentence(view)).toBe(
      "Would have approved 214 of the last 30 days' 480 requests, denied 3 and left 263 to you; it changes 3.",
    );
    expect(changeWords({ title: 'Run: npm test', was: 'pending', would_be: 'approve', status: 'approved' })).toBe(
      'Run: npm test: left to you → approved at once (it was approved)',
    );
  });
});
