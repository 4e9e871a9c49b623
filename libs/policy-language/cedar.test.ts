import { describe, expect, it } from 'vitest';
import {
  type CedarPolicy,
  cedarPolicyProblem,
  cedarSchemaJson,
  cedarVerdict,
  cedarVerdictUncached,
  createCedarAnswers,
  preparePolicies,
} from './cedar.js';
import { automaticMatch, outcomeOf } from './decision.js';
import type { RequestFacts } from './facts.js';
import { momentOf } from './local-time.js';

const facts: RequestFacts = {
  action_type: 'communication',
  agent_id: 'agt_a',
  risk_level: 'low',
  amount_cents: null,
  currency: 'USD',
  recipient: 'ana@ourcompany.com',
  title: 'Weekly report',
  reversible: true,
  metadata: { source: 'mcp', attempt: 2 },
};
const noon = momentOf(new Date('2026-03-04T12:00:00Z'), 'UTC');
let n = 0;
const policy = (cedar: string, name = `p${++n}`): CedarPolicy => ({ id: `pol_${name}`, name, cedar });
const verdict = (policies: CedarPolicy[], f: RequestFacts = facts, m = noon) =>
  cedarVerdict(preparePolicies(policies)!, f, 'act_1', m);

describe('Cedar policy validation', () => {
  it("accepts one static policy Cedar's validator accepts against the schema", () => {
    expect(cedarPolicyProblem('permit(principal, action == Action::"purchase", resource);')).toBeNull();
    expect(
      cedarPolicyProblem(
        'forbid(principal, action, resource) when { context.metadata.hasTag("env") && context.metadata.getTag("env") == "prod" };',
      ),
    ).toBeNull();
    expect(cedarSchemaJson()).toHaveProperty('');
  });

  it("refuses anything else with Cedar's own message", () => {
    expect(cedarPolicyProblem('permit(principal, action, resource')).toMatch(/^unexpected end of input/);
    expect(cedarPolicyProblem('permit(principal, action == Action::"buy", resource);')).toMatch(
      /unrecognized action `Action::"buy"`.*did you mean/,
    );
    expect(cedarPolicyProblem('permit(principal, action, resource) when { context.recipient == "a" };')).toMatch(
      /optional attribute `recipient`.*context has recipient/,
    );
    expect(cedarPolicyProblem('permit(principal, action, resource) when { context.local_hour == "9" };')).toMatch(
      /the types Long and String are not compatible/,
    );
    expect(cedarPolicyProblem('permit(principal, action, resource); permit(principal, action, resource);')).toBe(
      'must hold exactly one policy; it holds 2',
    );
    expect(cedarPolicyProblem('permit(principal == ?principal, action, resource);')).toMatch(/template/);
  });
});

describe('Cedar verdicts', () => {
  const permitMail = policy('permit(principal, action == Action::"communication", resource);', 'mail');
  const forbidMcp = policy(
    'forbid(principal, action, resource) when { context.metadata.hasTag("source") && context.metadata.getTag("source") == "mcp" };',
    'no mcp',
  );

  it('a matching forbid, else a matching permit, else none', () => {
    expect(verdict([permitMail])).toMatchObject({ effect: 'permit', policy: { name: 'mail' } });
    expect(verdict([permitMail, forbidMcp])).toMatchObject({ effect: 'forbid', policy: { name: 'no mcp' } });
    expect(verdict([forbidMcp, permitMail], { ...facts, metadata: { source: 'hook' } })).toMatchObject({
      effect: 'permit',
    });
    expect(verdict([permitMail], { ...facts, action_type: 'purchase' })).toBeNull();
  });

  it('cites the first matching policy in creation order', () => {
    const a = policy('permit(principal, action, resource) when { context.risk_level == "low" };', 'first');
    const b = policy('permit(principal, action, resource);', 'second');
    expect(verdict([a, b])?.policy.name).toBe('first');
    expect(verdict([b, a])?.policy.name).toBe('second');
  });

  it('reads amounts, recipients, tools, metadata numbers and the local clock', () => {
    const p = (text: string) => verdict([policy(`permit(principal, action, resource) when { ${text} };`)]);
    expect(p('context has amount_cents')).toBeNull();
    expect(
      verdict(
        [
          policy(
            'permit(principal, action, resource) when { context has amount_cents && context.amount_cents <= 500 };',
          ),
        ],
        { ...facts, amount_cents: 500 },
      ),
    ).not.toBeNull();
    expect(p('context has recipient && context.recipient like "*@ourcompany.com"')).not.toBeNull();
    expect(p('context has tool_name')).toBeNull();
    expect(
      verdict(
        [policy('permit(principal, action, resource) when { context has tool_name && context.tool_name == "Read" };')],
        { ...facts, metadata: { tool_name: 'Read' } },
      ),
    ).not.toBeNull();
    expect(p('context.metadata.hasTag("attempt") && context.metadata.getTag("attempt") == "2"')).not.toBeNull();
    expect(p('context.local_hour == 12 && context.weekday == "wed"')).not.toBeNull();
    expect(
      verdict(
        [policy('permit(principal, action, resource) when { context.local_hour == 12 };')],
        facts,
        momentOf(noon.at, 'Asia/Tokyo'),
      ),
    ).toBeNull();
    expect(p('principal == Agent::"agt_a" && context.reversible')).not.toBeNull();
    expect(p('principal == Agent::"agt_b"')).toBeNull();
  });

  it('a policy whose evaluation errs does not match (a tag read without hasTag)', () => {
    const p = policy('forbid(principal, action, resource) when { context.metadata.getTag("env") == "prod" };');
    expect(verdict([p, permitMail])).toMatchObject({ effect: 'permit' });
  });

  it('kept answers are the answers', () => {
    const prepared = preparePolicies([permitMail, forbidMcp])!;
    const answers = createCedarAnswers(4);
    const requests = [facts, { ...facts, metadata: { source: 'hook' } }, { ...facts, action_type: 'legal' }];
    for (let i = 0; i < 20; i++) {
      const f = { ...requests[i % 3]!, title: `t${i}` };
      expect(cedarVerdict(prepared, f, `act_${i}`, noon, answers)).toEqual(
        cedarVerdictUncached(prepared, f, `act_${i}`, noon),
      );
    }
  });

  it('asks only the policies whose scope admits the agent and the action type', () => {
    const named = policy('forbid(principal == Agent::"agt_b", action, resource);', 'not b');
    const buys = policy('permit(principal, action in [Action::"purchase", Action::"legal"], resource);', 'buys');
    const prepared = preparePolicies([named, buys, permitMail])!;
    expect(cedarVerdict(prepared, facts, 'act_1', noon)?.policy.name).toBe('mail');
    expect(cedarVerdict(prepared, { ...facts, agent_id: 'agt_b' }, 'act_1', noon)?.policy.name).toBe('not b');
    expect(cedarVerdict(prepared, { ...facts, action_type: 'legal' }, 'act_1', noon)?.policy.name).toBe('buys');
    expect(cedarVerdict(prepared, { ...facts, action_type: 'system' }, 'act_1', noon)).toBeNull();
    // One set per action type for the unnamed agents, one more per named agent.
    expect([...prepared.scoped.keys()].map((k) => k.replace('\u0000', '|'))).toEqual([
      'communication|',
      'communication|agt_b',
      'legal|',
      'system|',
    ]);
    expect(prepared.scoped.get('system\u0000')).toBeNull();
  });

  it('hands Cedar only what the policies read, and every tag when a tag is named otherwise than by a literal', () => {
    const literal = preparePolicies([forbidMcp])!;
    expect([...literal.reads.context].sort()).toEqual(['metadata']);
    expect(literal.reads.tags).toEqual(new Set(['source']));
    const dynamic = preparePolicies([
      policy(
        'forbid(principal, action, resource) when { context has tool_name && context.metadata.hasTag(context.tool_name) };',
      ),
    ])!;
    expect(dynamic.reads.tags).toBe('all');
    expect([...dynamic.reads.context].sort()).toEqual(['metadata', 'tool_name']);
  });
});

describe('rules, then Cedar', () => {
  const rules = [
    {
      name: 'deny legal',
      decision: 'auto_deny' as const,
      action_type: 'legal',
      agent_id: null,
      risk_level_max: null,
      amount_max_cents: null,
    },
    {
      name: 'quorum big',
      decision: 'require_quorum' as const,
      action_type: null,
      agent_id: null,
      risk_level_max: null,
      amount_max_cents: null,
      conditions: [{ field: 'amount', op: 'gt' as const, value: 1000 }],
    },
  ];
  const cedar = preparePolicies([
    policy('permit(principal, action, resource);', 'allow all'),
    policy('forbid(principal, action == Action::"purchase", resource);', 'no purchases'),
  ]);
  const outcome = (f: RequestFacts) => outcomeOf(automaticMatch({ rules, cedar }, f, 'act_1', noon));

  it('the first matching rule decides, whatever the policies say', () => {
    expect(automaticMatch({ rules, cedar }, { ...facts, action_type: 'legal' }, 'act_1', noon)?.rule?.name).toBe(
      'deny legal',
    );
    expect(outcome({ ...facts, action_type: 'legal' })).toBe('deny');
    expect(outcome({ ...facts, action_type: 'purchase', amount_cents: 200_000 })).toBe('pending'); // the quorum rule
  });

  it('Cedar decides when no rule matched: forbid, else permit', () => {
    expect(outcome({ ...facts, action_type: 'purchase', amount_cents: 500 })).toBe('deny');
    expect(outcome(facts)).toBe('approve');
  });

  it('without policies and without a matching rule, a person decides', () => {
    expect(outcomeOf(automaticMatch({ rules, cedar: null }, facts, 'act_1', noon))).toBe('pending');
  });
});
