import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { cedarEngine } from './cedar-engine.js';

/** The attributes of the context the schema declares. */
const CONTEXT_ATTRIBUTES = [
  'amount_cents',
  'currency',
  'risk_level',
  'reversible',
  'recipient',
  'metadata',
  'tool_name',
  'local_hour',
  'weekday',
] as const;
export type ContextAttribute = (typeof CONTEXT_ATTRIBUTES)[number];

/**
 * What a set of policies can read of a request, found in their text: each context attribute whose name appears,
 * each metadata tag named by a literal in `hasTag`/`getTag` (every tag when one is named otherwise), and the
 * resource's id when a policy names a `Request` entity. Reading more than this changes no answer; a request is
 * handed to Cedar with only this (its marshalling into WebAssembly is most of a decision's cost).
 */
export interface PolicyReads {
  context: ReadonlySet<ContextAttribute>;
  tags: ReadonlySet<string> | 'all';
  resource: boolean;
}

const TAG_CALL = /\b(?:hasTag|getTag)\s*\(/g;
const LITERAL_TAG_CALL = /\b(?:hasTag|getTag)\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/g;
// `context` other than before `.`, `[` or `has`: the whole record is compared or passed on.
const WHOLE_CONTEXT = /\bcontext\b(?!\s*(?:\.|\[|has\b))/;

export function readsOf(text: string): PolicyReads {
  const whole = WHOLE_CONTEXT.test(text);
  const context = new Set(CONTEXT_ATTRIBUTES.filter((name) => whole || text.includes(name)));
  const resource = text.includes('Request::') || /\bresource\s*(?:==|in\b)/.test(text);
  const literals = [...text.matchAll(LITERAL_TAG_CALL)];
  if (whole || literals.length !== [...text.matchAll(TAG_CALL)].length) return { context, tags: 'all', resource };
  const tags = new Set<string>();
  for (const [, literal] of literals) {
    try {
      tags.add(JSON.parse(`"${literal}"`) as string);
    } catch {
      return { context, tags: 'all', resource };
    }
  }
  return { context, tags, resource };
}

/** Which requests a policy can apply to, by its scope: the agents and action types it names (null: any). */
export interface PolicyScope {
  agents: ReadonlySet<string> | null;
  actions: ReadonlySet<string> | null;
}

type EntityRef = { type?: string; id: string } | { __entity: { type: string; id: string } };
const idOf = (e: EntityRef) => ('__entity' in e ? e.__entity.id : e.id);

/** The ids a scope constraint names (`==` or `in` one or several entities; with no groups `in` is equality). */
function namedIn(constraint: PolicyJson['principal'] | PolicyJson['action']): Set<string> | null {
  const c = constraint as { op: string; entity?: EntityRef; entities?: EntityRef[] };
  if (c.op !== '==' && c.op !== 'in') return null;
  if (c.entity) return new Set([idOf(c.entity)]);
  return c.entities ? new Set(c.entities.map(idOf)) : null;
}

/** A policy's scope, as Cedar parses it; any request when it cannot tell. */
export function scopeOf(text: string): PolicyScope {
  const parsed = cedarEngine().policyToJson(text);
  if (parsed.type === 'failure') return { agents: null, actions: null };
  return { agents: namedIn(parsed.json.principal), actions: namedIn(parsed.json.action) };
}

/** Whether a request of this agent and action type is in a policy's scope. */
export const inScope = (scope: PolicyScope, agent: string, action: string): boolean =>
  (scope.agents === null || scope.agents.has(agent)) && (scope.actions === null || scope.actions.has(action));
