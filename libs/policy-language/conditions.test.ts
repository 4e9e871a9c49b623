import { type Condition, ConditionsBody, describeZodError } from '@agent-auth/contracts';
import { describe, expect, it } from 'vitest';
import { conditionsHold } from './conditions.js';
import type { RequestFacts } from './facts.js';
import { localTimeOf, momentOf } from './local-time.js';
import { ruleMatches } from './rules.js';

const facts: RequestFacts = {
  action_type: 'communication',
  agent_id: 'agt_a',
  risk_level: 'medium',
  amount_cents: 1250,
  currency: 'USD',
  recipient: 'ana@ourcompany.com',
  title: 'Send the weekly report',
  reversible: false,
  metadata: { tool_name: 'Bash', source: 'claude-code', retries: 3, dry_run: true },
};
// Wednesday 2026-03-04 14:30 UTC.
const wednesday = momentOf(new Date('2026-03-04T14:30:00Z'), 'UTC');

/** The condition parsed as POST /rules parses it (so a test cannot use a condition the API would refuse). */
function parsed(c: Record<string, unknown>): Condition {
  const r = ConditionsBody.safeParse([c]);
  if (!r.success) throw new Error(describeZodError(r.error, 'conditions'));
  return r.data[0]!;
}
const holds = (c: Record<string, unknown>, f: RequestFacts = facts, m = wednesday) => conditionsHold([parsed(c)], f, m);

describe('condition operators', () => {
  it('eq and neq compare exactly (case included)', () => {
    expect(holds({ field: 'recipient', op: 'eq', value: 'ana@ourcompany.com' })).toBe(true);
    expect(holds({ field: 'recipient', op: 'eq', value: 'Ana@ourcompany.com' })).toBe(false);
    expect(holds({ field: 'recipient', op: 'neq', value: 'bob@ourcompany.com' })).toBe(true);
    expect(holds({ field: 'recipient', op: 'neq', value: 'ana@ourcompany.com' })).toBe(false);
  });

  it('in and not_in test membership of the list', () => {
    expect(holds({ field: 'currency', op: 'in', value: ['EUR', 'USD'] })).toBe(true);
    expect(holds({ field: 'currency', op: 'in', value: ['EUR', 'GBP'] })).toBe(false);
    expect(holds({ field: 'currency', op: 'not_in', value: ['EUR', 'GBP'] })).toBe(true);
    expect(holds({ field: 'currency', op: 'not_in', value: ['usd'] })).toBe(false); // codes are upper-cased
  });

  it('prefix, suffix and contains test the text', () => {
    expect(holds({ field: 'title', op: 'prefix', value: 'Send ' })).toBe(true);
    expect(holds({ field: 'title', op: 'prefix', value: 'the' })).toBe(false);
    expect(holds({ field: 'recipient', op: 'suffix', value: '@ourcompany.com' })).toBe(true);
    expect(holds({ field: 'recipient', op: 'suffix', value: '@ourcompany.co' })).toBe(false);
    expect(holds({ field: 'title', op: 'contains', value: 'weekly' })).toBe(true);
    expect(holds({ field: 'title', op: 'contains', value: 'monthly' })).toBe(false);
  });

  it('glob matches the whole text, * any run and ? one character', () => {
    expect(holds({ field: 'recipient', op: 'glob', value: '*@ourcompany.com' })).toBe(true);
    expect(holds({ field: 'recipient', op: 'glob', value: 'an?@*.com' })).toBe(true);
    expect(holds({ field: 'recipient', op: 'glob', value: 'a?@*.com' })).toBe(false);
    expect(holds({ field: 'recipient', op: 'glob', value: '*@ourcompany' })).toBe(false); // anchored at the end
  });

  it('lt, lte, gt and gte compare numbers, amounts in dollars', () => {
    expect(holds({ field: 'amount', op: 'lt', value: 12.51 })).toBe(true);
    expect(holds({ field: 'amount', op: 'lt', value: 12.5 })).toBe(false);
    expect(holds({ field: 'amount', op: 'lte', value: 12.5 })).toBe(true);
    expect(holds({ field: 'amount', op: 'gt', value: 12.49 })).toBe(true);
    expect(holds({ field: 'amount', op: 'gt', value: 12.5 })).toBe(false);
    expect(holds({ field: 'amount', op: 'gte', value: 12.5 })).toBe(true);
    expect(holds({ field: 'amount', op: 'eq', value: 12.5 })).toBe(true);
  });

  it('all conditions of a rule must hold', () => {
    const both = [
      parsed({ field: 'tool_name', op: 'eq', value: 'Bash' }),
      parsed({ field: 'amount', op: 'lt', value: 5 }),
    ];
    expect(conditionsHold(both, facts, wednesday)).toBe(false);
    expect(conditionsHold(both, { ...facts, amount_cents: 400 }, wednesday)).toBe(true);
  });
});

describe('condition fields', () => {
  it('recipient and title; a request without the field meets only neq and not_in', () => {
    const none = { ...facts, recipient: null };
    expect(holds({ field: 'recipient', op: 'eq', value: 'x' }, none)).toBe(false);
    expect(holds({ field: 'recipient', op: 'glob', value: '*' }, none)).toBe(false);
    expect(holds({ field: 'recipient', op: 'neq', value: 'x' }, none)).toBe(true);
    expect(holds({ field: 'recipient', op: 'not_in', value: ['x'] }, none)).toBe(true);
    expect(holds({ field: 'title', op: 'suffix', value: 'report' })).toBe(true);
  });

  it('currency', () => {
    expect(holds({ field: 'currency', op: 'eq', value: 'usd' })).toBe(true);
    expect(holds({ field: 'currency', op: 'eq', value: 'EUR' }, { ...facts, currency: 'USD' })).toBe(false);
  });

  it('amount: none on a request without one, except for neq and not_in', () => {
    const none = { ...facts, amount_cents: null };
    expect(holds({ field: 'amount', op: 'lt', value: 100 }, none)).toBe(false);
    expect(holds({ field: 'amount', op: 'gte', value: 0 }, none)).toBe(false);
    expect(holds({ field: 'amount', op: 'neq', value: 1 }, none)).toBe(true);
    expect(holds({ field: 'amount', op: 'in', value: [12.5, 99] })).toBe(true);
  });

  it('risk_level compares in its order, low to critical', () => {
    expect(holds({ field: 'risk_level', op: 'eq', value: 'medium' })).toBe(true);
    expect(holds({ field: 'risk_level', op: 'lt', value: 'high' })).toBe(true);
    expect(holds({ field: 'risk_level', op: 'lt', value: 'medium' })).toBe(false);
    expect(holds({ field: 'risk_level', op: 'lte', value: 'medium' })).toBe(true);
    expect(holds({ field: 'risk_level', op: 'gt', value: 'low' })).toBe(true);
    expect(holds({ field: 'risk_level', op: 'gte', value: 'critical' })).toBe(false);
    expect(holds({ field: 'risk_level', op: 'not_in', value: ['high', 'critical'] })).toBe(true);
  });

  it('metadata.<key> reads a top-level value; strings, numbers and booleans', () => {
    expect(holds({ field: 'metadata.source', op: 'eq', value: 'claude-code' })).toBe(true);
    expect(holds({ field: 'metadata.source', op: 'prefix', value: 'claude' })).toBe(true);
    expect(holds({ field: 'metadata.retries', op: 'gte', value: 3 })).toBe(true);
    expect(holds({ field: 'metadata.retries', op: 'eq', value: 3 })).toBe(true);
    expect(holds({ field: 'metadata.retries', op: 'eq', value: '3' })).toBe(false); // a number is not its text
    expect(holds({ field: 'metadata.dry_run', op: 'eq', value: true })).toBe(true);
    expect(holds({ field: 'metadata.source', op: 'lt', value: 3 })).toBe(false); // text is not ordered
    expect(holds({ field: 'metadata.missing', op: 'eq', value: 'x' })).toBe(false);
    expect(holds({ field: 'metadata.missing', op: 'neq', value: 'x' })).toBe(true);
  });

  it('tool_name is short for metadata.tool_name, or the tool the question named', () => {
    expect(holds({ field: 'tool_name', op: 'eq', value: 'Bash' })).toBe(true);
    expect(holds({ field: 'tool_name', op: 'in', value: ['Read', 'Grep'] })).toBe(false);
    const { metadata: _, ...bare } = facts;
    expect(holds({ field: 'tool_name', op: 'eq', value: 'Read' }, { ...bare, tool_name: 'Read' })).toBe(true);
    expect(holds({ field: 'tool_name', op: 'eq', value: 'Read' }, bare)).toBe(false);
  });

  it("local_hour and weekday are read on the account's clock", () => {
    expect(holds({ field: 'local_hour', op: 'eq', value: 14 })).toBe(true);
    expect(holds({ field: 'weekday', op: 'eq', value: 'wed' })).toBe(true);
    const paris = momentOf(new Date('2026-03-04T14:30:00Z'), 'Europe/Paris');
    expect(holds({ field: 'local_hour', op: 'eq', value: 15 }, facts, paris)).toBe(true);
    const tokyo = momentOf(new Date('2026-03-04T16:30:00Z'), 'Asia/Tokyo');
    expect(holds({ field: 'weekday', op: 'eq', value: 'thu' }, facts, tokyo)).toBe(true);
    expect(holds({ field: 'local_hour', op: 'lt', value: 6 }, facts, tokyo)).toBe(true); // 01:30 on Thursday
    expect(holds({ field: 'weekday', op: 'lt', value: 'sat' }, facts, tokyo)).toBe(true); // a working day
    expect(holds({ field: 'weekday', op: 'in', value: ['sat', 'sun'] }, facts, tokyo)).toBe(false);
  });
});

describe('local time at the edges', () => {
  it('turns the day at local midnight, not at UTC midnight', () => {
    // New York, winter (UTC-5): Sunday 23:59:59 local, then Monday 00:00.
    expect(localTimeOf(new Date('2026-01-05T04:59:59Z'), 'America/New_York')).toEqual({ hour: 23, weekday: 'sun' });
    expect(localTimeOf(new Date('2026-01-05T05:00:00Z'), 'America/New_York')).toEqual({ hour: 0, weekday: 'mon' });
    // Kolkata (UTC+5:30): UTC midnight is already 05:30 there.
    expect(localTimeOf(new Date('2026-01-04T18:29:59Z'), 'Asia/Kolkata')).toEqual({ hour: 23, weekday: 'sun' });
    expect(localTimeOf(new Date('2026-01-04T18:30:00Z'), 'Asia/Kolkata')).toEqual({ hour: 0, weekday: 'mon' });
    expect(localTimeOf(new Date('2026-01-05T00:00:00Z'), 'UTC')).toEqual({ hour: 0, weekday: 'mon' });
  });

  it('follows daylight saving time both ways', () => {
    // New York springs forward on 2026-03-08: 01:59 EST is followed by 03:00 EDT (02:xx never happens).
    expect(localTimeOf(new Date('2026-03-08T06:59:00Z'), 'America/New_York').hour).toBe(1);
    expect(localTimeOf(new Date('2026-03-08T07:00:00Z'), 'America/New_York').hour).toBe(3);
    // And falls back on 2026-11-01: 01:xx happens twice, an hour apart in UTC.
    expect(localTimeOf(new Date('2026-11-01T05:30:00Z'), 'America/New_York').hour).toBe(1);
    expect(localTimeOf(new Date('2026-11-01T06:30:00Z'), 'America/New_York').hour).toBe(1);
    expect(localTimeOf(new Date('2026-11-01T07:30:00Z'), 'America/New_York').hour).toBe(2);
    // Paris (last Sunday of March): 02:00 CET becomes 03:00 CEST.
    expect(localTimeOf(new Date('2026-03-29T00:59:00Z'), 'Europe/Paris').hour).toBe(1);
    expect(localTimeOf(new Date('2026-03-29T01:00:00Z'), 'Europe/Paris').hour).toBe(3);
  });

  it('a night-time rule holds exactly over the local night across a DST change', () => {
    const night = [parsed({ field: 'local_hour', op: 'lt', value: 6 })];
    const at = (iso: string) => conditionsHold(night, facts, momentOf(new Date(iso), 'America/New_York'));
    expect(at('2026-03-08T05:00:00Z')).toBe(true); // 00:00 EST
    expect(at('2026-03-08T09:59:00Z')).toBe(true); // 05:59 EDT
    expect(at('2026-03-08T10:00:00Z')).toBe(false); // 06:00 EDT (it would still be 05:00 in EST)
  });
});

describe('rules with conditions', () => {
  const rule = {
    action_type: 'communication',
    agent_id: null,
    risk_level_max: null,
    amount_max_cents: null,
    conditions: [parsed({ field: 'recipient', op: 'suffix', value: '@ourcompany.com' })],
  };

  it('apply only when the rule fields match and every condition holds', () => {
    expect(ruleMatches(rule, facts, wednesday)).toBe(true);
    expect(ruleMatches(rule, { ...facts, recipient: 'eve@elsewhere.com' }, wednesday)).toBe(false);
    expect(ruleMatches(rule, { ...facts, action_type: 'purchase' }, wednesday)).toBe(false);
    expect(ruleMatches({ ...rule, conditions: null }, { ...facts, recipient: 'eve@elsewhere.com' }, wednesday)).toBe(
      true,
    );
  });
});

describe('condition validation', () => {
  const detail = (conditions: unknown) => {
    const r = ConditionsBody.safeParse(conditions);
    return r.success ? 'ok' : describeZodError(r.error, 'body', conditions);
  };

  it('names the condition and the part that is wrong', () => {
    const ok = { field: 'recipient', op: 'eq', value: 'a' };
    expect(detail([ok, ok, { field: 'recipient', op: 'like', value: 'a' }])).toMatch(/^\[2\]\.op: /);
    expect(detail([{ field: 'payee', op: 'eq', value: 'a' }])).toMatch(/^\[0\]\.field: must be one of recipient/);
    expect(detail([{ field: 'metadata.', op: 'eq', value: 'a' }])).toMatch(/^\[0\]\.field: /);
    expect(detail([{ field: 'amount', op: 'glob', value: '1*' }])).toBe(
      "[0].op: 'glob' does not apply to amount (a number)",
    );
    expect(detail([{ field: 'amount', op: 'lt', value: 'ten' }])).toBe('[0].value: must be a number for amount');
    expect(detail([{ field: 'local_hour', op: 'eq', value: 24 }])).toBe('[0].value: must be a whole hour from 0 to 23');
    expect(detail([{ field: 'weekday', op: 'eq', value: 'monday' }])).toMatch(/^\[0\]\.value: must be one of mon/);
    expect(detail([{ field: 'risk_level', op: 'prefix', value: 'h' }])).toMatch(/^\[0\]\.op: /);
    expect(detail([{ field: 'title', op: 'lt', value: 'b' }])).toMatch(/^\[0\]\.op: /);
    expect(detail([{ field: 'recipient', op: 'in', value: 'a' }])).toBe('[0].value: must be a list for in');
    expect(detail([{ field: 'recipient', op: 'eq', value: ['a'] }])).toBe('[0].value: must be a single value for eq');
    expect(detail([{ field: 'recipient', op: 'in', value: ['a', 5] }])).toBe('[0].value[1]: must be a string');
    expect(detail([{ field: 'metadata.n', op: 'gt', value: 'x' }])).toBe('[0].value: must be a number for gt');
    expect(detail([{ field: 'metadata.n', op: 'eq', value: { a: 1 } }])).toMatch(/^\[0\]\.value: must be a string/);
    expect(detail([{ field: 'recipient', op: 'eq' }])).toBe('[0].value: is required');
    expect(detail([{ field: 'recipient', op: 'eq', value: 'a', extra: 1 }])).toMatch(/^\[0\]: has unknown field/);
  });

  it('bounds lists, patterns and the number of conditions', () => {
    expect(detail([{ field: 'recipient', op: 'in', value: Array.from({ length: 51 }, (_, i) => `r${i}`) }])).toBe(
      '[0].value: must have 1 to 50 values',
    );
    expect(detail([{ field: 'recipient', op: 'in', value: [] }])).toBe('[0].value: must have 1 to 50 values');
    expect(detail([{ field: 'title', op: 'glob', value: '*'.repeat(201) }])).toBe(
      '[0].value: must be at most 200 characters',
    );
    expect(detail([{ field: 'title', op: 'glob', value: '*'.repeat(200) }])).toBe('ok');
    expect(detail([])).toMatch(/must have 1 to 10 conditions/);
    expect(detail(Array(11).fill({ field: 'title', op: 'eq', value: 'a' }))).toMatch(/must have 1 to 10 conditions/);
  });
});
