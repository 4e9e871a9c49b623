import fc from 'fast-check';
import type { Condition } from '@agent-auth/contracts';
import {
  automaticMatch,
  type CedarPolicy,
  cedarVerdict,
  momentOf,
  outcomeOf,
  preparePolicies,
  type RequestFacts,
} from '@agent-auth/policy-language';
import { describe, expect, it } from 'vitest';
import {
  createReplayTally,
  factsOfStored,
  type HistoryRow,
  type ReplayRule,
  readsMetadata,
  replayed,
} from './replay.js';

const facts = fc.record({
  action_type: fc.constantFrom('purchase', 'communication', 'system'),
  agent_id: fc.constantFrom('agt_a', 'agt_b'),
  risk_level: fc.constantFrom('low', 'medium', 'high', 'critical'),
  amount_cents: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: null }),
  currency: fc.constantFrom('USD', 'EUR'),
  recipient: fc.option(fc.constantFrom('ana@ourcompany.com', 'eve@elsewhere.com'), { nil: null }),
  title: fc.constantFrom('Run: git status', 'Run: rm -rf /', 'Buy paper'),
  reversible: fc.boolean(),
  metadata: fc.option(
    fc.record({ tool_name: fc.constantFrom('Bash', 'Read'), team: fc.constantFrom('ops', 'sales') }),
    {
      nil: undefined,
    },
  ),
}) as fc.Arbitrary<RequestFacts>;

const conditions: Condition[][] = [
  [{ field: 'tool_name', op: 'eq', value: 'Bash' }],
  [{ field: 'title', op: 'glob', value: '*rm -*' }],
  [{ field: 'recipient', op: 'suffix', value: '@ourcompany.com' }],
  [
    { field: 'amount', op: 'lte', value: 20 },
    { field: 'metadata.team', op: 'eq', value: 'ops' },
  ],
  [{ field: 'risk_level', op: 'gte', value: 'high' }],
];
const rule = fc.record({
  name: fc.constantFrom('r1', 'r2', 'r3'),
  decision: fc.constantFrom('auto_approve', 'auto_deny', 'require_quorum'),
  action_type: fc.option(fc.constantFrom('purchase', 'communication', 'system'), { nil: null }),
  agent_id: fc.option(fc.constantFrom('agt_a', 'agt_b'), { nil: null }),
  risk_level_max: fc.option(fc.constantFrom('low', 'medium', 'high'), { nil: null }),
  amount_max_cents: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: null }),
  conditions: fc.option(fc.constantFrom(...conditions), { nil: null }),
}) as fc.Arbitrary<ReplayRule>;

const cedarTexts = [
  'permit(principal, action == Action::"communication", resource) when { context has recipient && context.recipient like "*@ourcompany.com" };',
  'forbid(principal, action, resource) when { context.metadata.hasTag("team") && context.metadata.getTag("team") == "sales" };',
  'permit(principal == Agent::"agt_a", action, resource) when { context.risk_level == "low" };',
  'forbid(principal, action == Action::"purchase", resource) when { context has amount_cents && context.amount_cents > 2500 };',
];
const cedarSet = fc.subarray(cedarTexts.map((cedar, i): CedarPolicy => ({ id: `pol_${i}`, name: `p${i}`, cedar })));
const at = momentOf(new Date('2026-03-04T12:00:00Z'), 'Europe/Paris');

describe('replayed', () => {
  it('is what a live decision would be: today (was), and today with a draft rule appended or a draft policy added (would)', () => {
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 5 }),
        cedarSet,
        rule,
        fc.constantFrom(...cedarTexts),
        facts,
        (rules, set, draftRule, draftCedar, f) => {
          const cedar = preparePolicies(set);
          const withCedar = preparePolicies([...set, { id: 'pol_draft', name: 'draft', cedar: draftCedar }])!;
          const input = { facts: f, id: 'act_1', moment: at, askCedar: cedarVerdict };
          const { was, would } = replayed({ rules, cedar }, [{ rule: draftRule }, { cedar: withCedar }], input);
          const live = (policy: Parameters<typeof automaticMatch>[0]) =>
            outcomeOf(automaticMatch(policy, f, 'act_1', at) as never);
          expect(was).toBe(live({ rules, cedar }));
          expect(would[0]).toBe(live({ rules: [...rules, draftRule], cedar }));
          expect(would[1]).toBe(live({ rules, cedar: withCedar }));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('opens metadata only when a rule, a draft or a policy reads it', () => {
    const plain = {
      ...({} as ReplayRule),
      name: 'x',
      decision: 'auto_approve' as const,
      action_type: null,
      agent_id: null,
      risk_level_max: null,
      amount_max_cents: null,
    };
    const tool: ReplayRule = { ...plain, conditions: [{ field: 'tool_name', op: 'eq', value: 'Bash' }] };
    const titled: ReplayRule = { ...plain, conditions: [{ field: 'title', op: 'eq', value: 'x' }] };
    expect(readsMetadata({ rules: [plain, titled], cedar: null }, [{ rule: titled }])).toBe(false);
    expect(readsMetadata({ rules: [tool], cedar: null }, [])).toBe(true);
    expect(readsMetadata({ rules: [], cedar: null }, [{ rule: tool }])).toBe(true);
    const reads = preparePolicies([{ id: 'pol_1', name: 'p', cedar: cedarTexts[1]! }]);
    const blind = preparePolicies([{ id: 'pol_2', name: 'p', cedar: cedarTexts[2]! }]);
    expect(readsMetadata({ rules: [], cedar: blind }, [])).toBe(false);
    expect(readsMetadata({ rules: [], cedar: reads }, [])).toBe(true);
    expect(readsMetadata({ rules: [], cedar: null }, [{ cedar: reads! }])).toBe(true);
  });
});

describe('a stored request as rules read it', () => {
  it('opens its metadata once, and only when a rule reads it', () => {
    let opened = 0;
    const row = {
      id: 'act_1',
      agent_id: 'agt_a',
      action_type: 'purchase',
      title: 'Buy',
      risk_level: 'low',
      reversible: true,
      amount_cents: 500,
      currency: 'USD',
      recipient: null,
    } as HistoryRow;
    const f = factsOfStored(row, () => {
      opened++;
      return { team: 'ops' };
    });
    const cheap: ReplayRule = {
      name: 'r',
      decision: 'auto_approve',
      action_type: 'legal',
      agent_id: null,
      risk_level_max: null,
      amount_max_cents: null,
      conditions: [{ field: 'metadata.team', op: 'eq', value: 'ops' }],
    };
    const input = { facts: f, id: 'act_1', moment: at, askCedar: cedarVerdict };
    expect(replayed({ rules: [cheap], cedar: null }, [], input).was).toBe('pending'); // another action type
    expect(opened).toBe(0);
    expect(replayed({ rules: [{ ...cheap, action_type: null }], cedar: null }, [], input).was).toBe('approve');
    expect(replayed({ rules: [{ ...cheap, action_type: null }], cedar: null }, [], input).was).toBe('approve');
    expect(opened).toBe(1);
  });
});

describe('replay tally', () => {
  const row = (i: number): HistoryRow => ({
    id: `act_${i}`,
    agent_id: 'agt_a',
    action_type: 'system',
    title: `t${i}`,
    risk_level: 'low',
    reversible: true,
    amount_cents: null,
    currency: 'USD',
    recipient: null,
    metadata_enc: null,
    status: 'pending',
    resolved_by: null,
    created_at: new Date(1_800_000_000_000 - i * 1000),
  });

  it('counts every outcome with the draft and lists the 50 newest changes', () => {
    const tally = createReplayTally(7);
    for (let i = 0; i < 120; i++)
      tally.add(row(i), 'pending', i % 3 === 0 ? 'pending' : i % 3 === 1 ? 'approve' : 'deny');
    const view = tally.result();
    expect(view).toMatchObject({ days: 7, evaluated: 120, approve: 40, deny: 40, pending: 40, changed_total: 80 });
    expect(view.changed).toHaveLength(50);
    expect(view.changed[0]).toMatchObject({
      id: 'act_1',
      title: 't1',
      was: 'pending',
      would_be: 'approve',
      status: 'pending',
    });
  });

  it('keeps the 50 newest changes whatever the order the requests come in (agent by agent)', () => {
    const tally = createReplayTally(7);
    const order = Array.from({ length: 300 }, (_, i) => (i * 7919) % 300); // every index once, shuffled
    for (const i of order) tally.add(row(i), 'pending', 'deny');
    const { changed, changed_total } = tally.result();
    expect(changed_total).toBe(300);
    expect(changed.map((c) => c.id)).toEqual(Array.from({ length: 50 }, (_, i) => `act_${i}`));
  });
});
