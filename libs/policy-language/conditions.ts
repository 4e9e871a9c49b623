import {
  type Condition,
  type ConditionOp,
  type ConditionScalar,
  conditionFieldKind,
  isListOp,
  METADATA_FIELD_PREFIX,
  orderOf,
  toCents,
} from '@agent-auth/contracts';
import type { Moment } from './local-time.js';
import { metadataOf, type RequestFacts, toolNameOf } from './facts.js';
import { globMatches } from './glob.js';

/** A value a condition compares: text, a number (amounts in cents, orders as their rank), or a boolean. */
type Comparable = string | number | boolean;

/** Whether a compiled condition holds for a request at a moment. */
export type ConditionTest = (facts: RequestFacts, moment: Moment) => boolean;

/** Reads a condition's field of a request; undefined when the request has none. */
type FieldReader = (facts: RequestFacts, moment: Moment) => Comparable | undefined;

const presentText = (v: string | null | undefined) => (v === null || v === undefined ? undefined : v);

function readerOf(field: string): FieldReader {
  if (field.startsWith(METADATA_FIELD_PREFIX)) {
    const key = field.slice(METADATA_FIELD_PREFIX.length);
    return (f) => metadataOf(f)?.[key];
  }
  switch (field) {
    case 'recipient':
      return (f) => presentText(f.recipient);
    case 'title':
      return (f) => presentText(f.title);
    case 'currency':
      return (f) => f.currency;
    case 'amount':
      return (f) => (f.amount_cents === null ? undefined : f.amount_cents);
    case 'risk_level':
      return (f) => orderOf('risk_level').indexOf(f.risk_level);
    case 'tool_name':
      return (f) => presentText(toolNameOf(f));
    case 'local_hour':
      return (_, m) => m.local().hour;
    case 'weekday':
      return (_, m) => orderOf('weekday').indexOf(m.local().weekday);
    default:
      throw new Error(`no condition field ${field}`);
  }
}

/** A condition's value as the reader's values compare with it: amounts in cents, ordered names as their rank. */
function comparableOf(field: string, v: ConditionScalar): Comparable {
  const kind = conditionFieldKind(field);
  if (kind === 'number' && field === 'amount') return toCents(v as number);
  if (kind === 'ordered') return orderOf(field).indexOf(v as string);
  return v;
}

type Test = (actual: Comparable) => boolean;

const asText = (v: Comparable) => (typeof v === 'string' ? v : String(v));

function testOf(op: ConditionOp, value: Comparable | Comparable[]): Test {
  const one = value as Comparable;
  switch (op) {
    case 'eq':
      return (a) => a === one;
    case 'neq':
      return (a) => a !== one;
    case 'in': {
      const set = new Set(value as Comparable[]);
      return (a) => set.has(a);
    }
    case 'not_in': {
      const set = new Set(value as Comparable[]);
      return (a) => !set.has(a);
    }
    case 'prefix':
      return (a) => asText(a).startsWith(one as string);
    case 'suffix':
      return (a) => asText(a).endsWith(one as string);
    case 'contains':
      return (a) => asText(a).includes(one as string);
    case 'glob':
      return (a) => globMatches(one as string, asText(a));
    case 'lt':
      return (a) => typeof a === 'number' && a < (one as number);
    case 'lte':
      return (a) => typeof a === 'number' && a <= (one as number);
    case 'gt':
      return (a) => typeof a === 'number' && a > (one as number);
    case 'gte':
      return (a) => typeof a === 'number' && a >= (one as number);
  }
}

/**
 * One condition as a test. A request without the field (no recipient, no amount, no such metadata key) meets only
 * `neq` and `not_in`: it is not equal to, nor one of, anything.
 */
export function compileCondition(c: Condition): ConditionTest {
  const read = readerOf(c.field);
  const value = isListOp(c.op)
    ? (c.value as ConditionScalar[]).map((v) => comparableOf(c.field, v))
    : comparableOf(c.field, c.value as ConditionScalar);
  const test = testOf(c.op, value);
  const absent = c.op === 'neq' || c.op === 'not_in';
  return (facts, moment) => {
    const actual = read(facts, moment);
    return actual === undefined ? absent : test(actual);
  };
}

// Compiled once per stored list of conditions (the policy cache keeps the same arrays for every decision).
const compiled = new WeakMap<readonly Condition[], ConditionTest>();

/**
 * What reading a field costs: the request's own fields nothing, its metadata an opening (a replay opens a stored
 * request's metadata only when asked), the local time a time-zone conversion. All conditions must hold, so they
 * are tried cheapest first: the first that fails spares the rest.
 */
const costOf = (c: Condition) =>
  c.field === 'local_hour' || c.field === 'weekday'
    ? 2
    : c.field === 'tool_name' || c.field.startsWith(METADATA_FIELD_PREFIX)
      ? 1
      : 0;

/** Whether every condition holds (an empty list always does). */
export function conditionsHold(conditions: readonly Condition[], facts: RequestFacts, moment: Moment): boolean {
  let test = compiled.get(conditions);
  if (!test) {
    const tests = [...conditions].sort((a, b) => costOf(a) - costOf(b)).map(compileCondition);
    test = (f, m) => {
      for (const t of tests) if (!t(f, m)) return false;
      return true;
    };
    compiled.set(conditions, test);
  }
  return test(facts, moment);
}
