import { createHash } from 'node:crypto';
import type { AuthorizationCall, EntityJson } from '@cedar-policy/cedar-wasm/nodejs';
import { cedarEngine } from './cedar-engine.js';
import { inScope, type PolicyReads, type PolicyScope, readsOf, scopeOf } from './cedar-reads.js';
import { describeCedarError } from './cedar-validation.js';
import { metadataOf, type RequestFacts, toolNameOf } from './facts.js';
import type { Moment } from './local-time.js';

export { cedarPolicyProblem, cedarSchemaJson } from './cedar-validation.js';

/** A stored Cedar policy: its id (the id Cedar names it by), its name (what a decision cites) and its text. */
export interface CedarPolicy {
  id: string;
  name: string;
  cedar: string;
}

/** The policies whose scope admits one agent and action type, parsed as one set, and what they read. */
interface ScopedSet {
  id: string;
  policies: readonly CedarPolicy[];
  reads: PolicyReads;
}

/**
 * An account's policies ready for Cedar. A request is asked of only the policies whose scope admits its agent and
 * action type (`principal == Agent::…`, `action == Action::…`): Cedar's time grows with every policy it is handed,
 * in scope or not. Those sets are parsed once each, on first use, and kept by Cedar by an id made of their content,
 * so accounts with the same policies share them.
 */
export interface PreparedPolicies {
  readonly id: string;
  readonly policies: readonly CedarPolicy[];
  /** Each policy's place in creation order, by id: the first of several that match is the one cited. */
  readonly order: ReadonlyMap<string, number>;
  readonly scopes: readonly PolicyScope[];
  /** The agents some policy names: requests of any other agent share one set per action type. */
  readonly namedAgents: ReadonlySet<string>;
  /** What any of the policies reads (the union of the scoped sets'). */
  readonly reads: PolicyReads;
  /** The scoped sets made so far, by action type and agent (null: no policy applies). */
  readonly scoped: Map<string, ScopedSet | null>;
}

// Parsed sets live in the WebAssembly instance, which has no way to drop one: a set pushed out of this registry
// is replaced by an empty one, and parsed again if a holder of it evaluates again.
const parsed = new Map<string, readonly CedarPolicy[]>();
const PARSED_MAX = 5000;

function parse(id: string, policies: readonly CedarPolicy[]): void {
  const answer = cedarEngine().preparsePolicySet(id, {
    staticPolicies: Object.fromEntries(policies.map((p) => [p.id, p.cedar])),
  });
  if (answer.type === 'failure')
    throw new Error(`Cedar policies do not parse: ${describeCedarError(answer.errors[0]!)}`);
  parsed.set(id, policies);
  if (parsed.size > PARSED_MAX) {
    const oldest = parsed.keys().next().value!;
    parsed.delete(oldest);
    cedarEngine().preparsePolicySet(oldest, { staticPolicies: {} });
  }
}

const contentId = (policies: readonly CedarPolicy[]) => {
  const digest = createHash('sha256');
  for (const p of policies) digest.update(`${p.id}\u0000${p.cedar}\u0000`);
  return `aa:${digest.digest('base64url')}`;
};

/** An account's Cedar policies ready to evaluate; null when it has none (nothing to ask Cedar). */
export function preparePolicies(policies: readonly CedarPolicy[]): PreparedPolicies | null {
  if (policies.length === 0) return null;
  const scopes = policies.map((p) => scopeOf(p.cedar));
  return {
    id: contentId(policies),
    policies,
    order: new Map(policies.map((p, i) => [p.id, i])),
    scopes,
    namedAgents: new Set(scopes.flatMap((s) => [...(s.agents ?? [])])),
    reads: readsOf(policies.map((p) => p.cedar).join('\n')),
    scoped: new Map(),
  };
}

/** The set of the policies that can apply to a request of this agent and action type; null when none can. */
function scopedSet(prepared: PreparedPolicies, agent: string, action: string): ScopedSet | null {
  const key = `${action}\u0000${prepared.namedAgents.has(agent) ? agent : ''}`;
  let set = prepared.scoped.get(key);
  if (set === undefined) {
    const policies = prepared.policies.filter((_, i) => inScope(prepared.scopes[i]!, agent, action));
    set =
      policies.length === 0
        ? null
        : { id: contentId(policies), policies, reads: readsOf(policies.map((p) => p.cedar).join('\n')) };
    prepared.scoped.set(key, set);
  }
  if (set && !parsed.has(set.id)) parse(set.id, set.policies);
  return set;
}

/** What Cedar's policies say of a request: a matching forbid, else a matching permit; null when none matches. */
export interface CedarVerdict {
  effect: 'permit' | 'forbid';
  policy: CedarPolicy;
}

const METADATA = { type: 'Metadata', id: '' };
const NO_ENTITIES: EntityJson[] = [];
type ContextValue = string | number | boolean | { __entity: typeof METADATA };

/** The request's metadata values as tags (text), those the policies read. */
function tagsOf(reads: PolicyReads, metadata: RequestFacts['metadata']): Record<string, string> | undefined {
  if (!metadata) return undefined;
  let tags: Record<string, string> | undefined;
  for (const key in metadata) {
    if (reads.tags !== 'all' && !reads.tags.has(key)) continue;
    const value = metadata[key]!;
    tags ??= {};
    tags[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return tags;
}

/** The context of a request, holding only what the policies read (the rest cannot change the answer). */
function contextOf(reads: PolicyReads, facts: RequestFacts, moment: Moment) {
  const wants = reads.context;
  const context: Record<string, ContextValue> = {};
  if (wants.has('amount_cents') && facts.amount_cents !== null) context.amount_cents = facts.amount_cents;
  if (wants.has('currency')) context.currency = facts.currency;
  if (wants.has('risk_level')) context.risk_level = facts.risk_level;
  if (wants.has('reversible')) context.reversible = facts.reversible ?? false;
  if (wants.has('recipient') && facts.recipient) context.recipient = facts.recipient;
  if (wants.has('tool_name')) {
    const tool = toolNameOf(facts);
    if (tool !== null) context.tool_name = tool;
  }
  if (wants.has('local_hour') || wants.has('weekday')) {
    const local = moment.local();
    context.local_hour = local.hour;
    context.weekday = local.weekday;
  }
  let entities = NO_ENTITIES;
  if (wants.has('metadata')) {
    context.metadata = { __entity: METADATA };
    const tags = tagsOf(reads, metadataOf(facts));
    if (tags) entities = [{ uid: METADATA, attrs: {}, parents: [], tags }];
  }
  return { context, entities };
}

/**
 * Answers kept by the Cedar request they answer (a set's id and the request as handed to Cedar): Cedar decides from
 * nothing else, and requests that look alike to the policies are common (the same tool of the same agent). A
 * map cleared when full: a few MB at most.
 */
export function createCedarAnswers(max: number) {
  const answers = new Map<string, CedarVerdict | null>();
  return {
    get: (key: string) => answers.get(key),
    set(key: string, verdict: CedarVerdict | null): void {
      if (answers.size >= max) answers.clear();
      answers.set(key, verdict);
    },
  };
}
export type CedarAnswers = ReturnType<typeof createCedarAnswers>;

const liveAnswers = createCedarAnswers(20_000);

/**
 * Cedar's answer for a request: `forbid` when a forbid policy matches, else `permit` when a permit policy does,
 * the first such policy in creation order cited; null when none matches. A policy whose evaluation errs (reading a
 * metadata tag the request lacks without `hasTag`) does not match, as Cedar decides.
 */
export function cedarVerdict(
  prepared: PreparedPolicies,
  facts: RequestFacts,
  requestId: string,
  moment: Moment,
  answers: CedarAnswers = liveAnswers,
): CedarVerdict | null {
  const set = scopedSet(prepared, facts.agent_id, facts.action_type);
  if (!set) return null;
  const { context, entities } = contextOf(set.reads, facts, moment);
  const resource = set.reads.resource ? requestId : '';
  const key = `${set.id}\u0000${facts.agent_id}\u0000${facts.action_type}\u0000${resource}\u0000${JSON.stringify(context)}${entities.length ? JSON.stringify(entities[0]!.tags) : ''}`;
  const known = answers.get(key);
  if (known !== undefined) return known;
  const verdict = ask(prepared, set, {
    principal: { type: 'Agent', id: facts.agent_id },
    action: { type: 'Action', id: facts.action_type },
    resource: { type: 'Request', id: resource },
    context,
    entities,
  });
  answers.set(key, verdict);
  return verdict;
}

/** Asks Cedar, uncached: for a measure of Cedar's own time. */
export function cedarVerdictUncached(
  prepared: PreparedPolicies,
  facts: RequestFacts,
  requestId: string,
  moment: Moment,
): CedarVerdict | null {
  return cedarVerdict(prepared, facts, requestId, moment, { get: () => undefined, set: () => {} });
}

function ask(
  prepared: PreparedPolicies,
  set: ScopedSet,
  request: Omit<AuthorizationCall, 'policies'>,
): CedarVerdict | null {
  if (!parsed.has(set.id)) parse(set.id, set.policies);
  const answer = cedarEngine().statefulIsAuthorized({ ...request, preparsedPolicySetId: set.id });
  if (answer.type === 'failure') throw new Error(`Cedar could not decide: ${describeCedarError(answer.errors[0]!)}`);
  const { decision, diagnostics } = answer.response;
  if (diagnostics.reason.length === 0) return null; // denied by default: no policy matched
  let first = diagnostics.reason[0]!;
  for (const id of diagnostics.reason)
    if ((prepared.order.get(id) ?? Infinity) < (prepared.order.get(first) ?? Infinity)) first = id;
  const policy = prepared.policies[prepared.order.get(first)!]!;
  return { effect: decision === 'allow' ? 'permit' : 'forbid', policy };
}
