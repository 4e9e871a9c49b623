import { createHash } from 'node:crypto';
import type { AuthorizationCall, DetailedError, EntityJson } from '@cedar-policy/cedar-wasm/nodejs';
import { cedarEngine } from './cedar-engine.js';
import { CEDAR_SCHEMA } from './cedar-schema.js';
import { type RequestFacts, toolNameOf } from './facts.js';
import type { Moment } from './local-time.js';

/** A stored Cedar policy: its id (the id Cedar names it by), its name (what a decision cites) and its text. */
export interface CedarPolicy {
  id: string;
  name: string;
  cedar: string;
}

/** One of Cedar's errors in a sentence: its message, its help, and where in the text it is. */
function describe(error: DetailedError): string {
  const message = error.message.replace(/^for policy `[^`]*`, /, '').replace(/ with id `[^`]*`/, '');
  const at = error.sourceLocations?.[0];
  return `${message}${error.help ? ` (${error.help})` : ''}${at ? ` at character ${at.start}` : ''}`;
}

/**
 * What is wrong with a policy text, in Cedar's own words, or null when it is one static policy that Cedar's
 * validator accepts against the published schema (strict mode: unknown attributes, actions or types, and
 * optional attributes read without `has`, are errors).
 */
export function cedarPolicyProblem(text: string): string | null {
  const cedar = cedarEngine();
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') return describe(parts.errors[0]!);
  if (parts.policy_templates.length > 0) return 'must be a static policy, not a template (no ?principal or ?resource)';
  if (parts.policies.length !== 1) return `must hold exactly one policy; it holds ${parts.policies.length}`;
  const checked = cedar.validate({
    schema: CEDAR_SCHEMA,
    policies: { staticPolicies: { policy: text } },
    validationSettings: { mode: 'strict' },
  });
  if (checked.type === 'failure') return describe(checked.errors[0]!);
  const first = checked.validationErrors[0];
  return first ? describe(first.error) : null;
}

/** The published schema as JSON (Cedar's own conversion of the text). */
export function cedarSchemaJson(): Record<string, unknown> {
  const json = cedarEngine().schemaToJson(CEDAR_SCHEMA);
  if (json.type === 'failure') throw new Error(`the Cedar schema does not parse: ${describe(json.errors[0]!)}`);
  return json.json;
}

/**
 * An account's policies as Cedar holds them, parsed once (Cedar keeps a parsed set by id in the WebAssembly
 * instance): `id` names the parsed set by its content, so accounts with the same policies share one.
 */
export interface PreparedPolicies {
  readonly id: string;
  readonly policies: readonly CedarPolicy[];
  /** Each policy's place in creation order, by id: the first of several that match is the one cited. */
  readonly order: ReadonlyMap<string, number>;
  /** Whether any policy reads the metadata, or the local time (each costs work per request only when read). */
  readonly readsMetadata: boolean;
  readonly readsLocalTime: boolean;
}

// Parsed sets live in the WebAssembly instance, which has no way to drop one: a set pushed out of this registry
// is replaced by an empty one, and parsed again if a holder of it evaluates again.
const parsed = new Map<string, readonly CedarPolicy[]>();
const PARSED_MAX = 5000;

function parse(id: string, policies: readonly CedarPolicy[]): void {
  const answer = cedarEngine().preparsePolicySet(id, {
    staticPolicies: Object.fromEntries(policies.map((p) => [p.id, p.cedar])),
  });
  if (answer.type === 'failure') throw new Error(`Cedar policies do not parse: ${describe(answer.errors[0]!)}`);
  parsed.set(id, policies);
  if (parsed.size > PARSED_MAX) {
    const oldest = parsed.keys().next().value!;
    parsed.delete(oldest);
    cedarEngine().preparsePolicySet(oldest, { staticPolicies: {} });
  }
}

/** An account's Cedar policies ready to evaluate; null when it has none (nothing to ask Cedar). */
export function preparePolicies(policies: readonly CedarPolicy[]): PreparedPolicies | null {
  if (policies.length === 0) return null;
  const digest = createHash('sha256');
  for (const p of policies) digest.update(`${p.id}\u0000${p.cedar}\u0000`);
  const id = `aa:${digest.digest('base64url')}`;
  if (!parsed.has(id)) parse(id, policies);
  const text = policies.map((p) => p.cedar).join('\n');
  return {
    id,
    policies,
    order: new Map(policies.map((p, i) => [p.id, i])),
    readsMetadata: text.includes('metadata'),
    readsLocalTime: text.includes('local_hour') || text.includes('weekday'),
  };
}

/** What Cedar's policies say of a request: a matching forbid, else a matching permit; null when none matches. */
export interface CedarVerdict {
  effect: 'permit' | 'forbid';
  policy: CedarPolicy;
}

const METADATA = { type: 'Metadata', id: '' };
const NO_ENTITIES: EntityJson[] = [];

/** The Cedar request of a request: principal, action, resource, context (and the metadata entity when read). */
function cedarRequestOf(
  prepared: PreparedPolicies,
  facts: RequestFacts,
  requestId: string,
  moment: Moment,
): Omit<AuthorizationCall, 'policies'> {
  const context: Record<string, string | number | boolean | { __entity: typeof METADATA }> = {
    currency: facts.currency,
    risk_level: facts.risk_level,
    reversible: facts.reversible ?? false,
    metadata: { __entity: METADATA },
    local_hour: 0,
    weekday: 'mon',
  };
  if (facts.amount_cents !== null) context.amount_cents = facts.amount_cents;
  if (facts.recipient) context.recipient = facts.recipient;
  const tool = toolNameOf(facts);
  if (tool !== null) context.tool_name = tool;
  if (prepared.readsLocalTime) {
    const local = moment.local();
    context.local_hour = local.hour;
    context.weekday = local.weekday;
  }
  let entities = NO_ENTITIES;
  if (prepared.readsMetadata && facts.metadata) {
    const tags: Record<string, string> = {};
    for (const key in facts.metadata) {
      const value = facts.metadata[key]!;
      tags[key] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    entities = [{ uid: METADATA, attrs: {}, parents: [], tags }];
  }
  return {
    principal: { type: 'Agent', id: facts.agent_id },
    action: { type: 'Action', id: facts.action_type },
    resource: { type: 'Request', id: requestId },
    context,
    entities,
  };
}

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
): CedarVerdict | null {
  if (!parsed.has(prepared.id)) parse(prepared.id, prepared.policies);
  const answer = cedarEngine().statefulIsAuthorized({
    ...cedarRequestOf(prepared, facts, requestId, moment),
    preparsedPolicySetId: prepared.id,
  });
  if (answer.type === 'failure') throw new Error(`Cedar could not decide: ${describe(answer.errors[0]!)}`);
  const { decision, diagnostics } = answer.response;
  if (diagnostics.reason.length === 0) return null; // denied by default: no policy matched
  let first = diagnostics.reason[0]!;
  for (const id of diagnostics.reason)
    if ((prepared.order.get(id) ?? Infinity) < (prepared.order.get(first) ?? Infinity)) first = id;
  const policy = prepared.policies[prepared.order.get(first)!]!;
  return { effect: decision === 'allow' ? 'permit' : 'forbid', policy };
}
