import { z } from 'zod';
import { riskLevels } from '../enums.js';

/** How a condition compares a request's field with its value. */
export const conditionOps = [
  'eq',
  'neq',
  'in',
  'not_in',
  'prefix',
  'suffix',
  'contains',
  'glob',
  'lt',
  'lte',
  'gt',
  'gte',
] as const;
export type ConditionOp = (typeof conditionOps)[number];

/** The days of `weekday`, in calendar order from Monday (the order lt/gt compare in). */
export const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof weekdays)[number];

export const conditionLimits = {
  perRule: 10,
  /** Most values an `in` or `not_in` list may hold. */
  listValues: 50,
  /** Longest text value or pattern. */
  text: 200,
  /** Longest metadata key (as a request's metadata allows). */
  metadataKey: 200,
} as const;

/** The fields a condition may name besides `metadata.<key>`. */
export const conditionFields = [
  'recipient',
  'title',
  'currency',
  'amount',
  'risk_level',
  'tool_name',
  'local_hour',
  'weekday',
] as const;

export const METADATA_FIELD_PREFIX = 'metadata.';

/**
 * What a field holds, which decides the operators and values it takes: text (every text operator), a number
 * (comparisons), an ordered name (risk levels, weekdays: compared in their order), or a metadata value (any scalar).
 */
export type ConditionFieldKind = 'text' | 'currency' | 'number' | 'ordered' | 'metadata';

const KINDS: Record<(typeof conditionFields)[number], ConditionFieldKind> = {
  recipient: 'text',
  title: 'text',
  tool_name: 'text',
  currency: 'currency',
  amount: 'number',
  local_hour: 'number',
  risk_level: 'ordered',
  weekday: 'ordered',
};

/** The kind of a condition's field; undefined for a field conditions do not know. */
export function conditionFieldKind(field: string): ConditionFieldKind | undefined {
  if (field.startsWith(METADATA_FIELD_PREFIX)) {
    const key = field.slice(METADATA_FIELD_PREFIX.length);
    return key.length > 0 && key.length <= conditionLimits.metadataKey ? 'metadata' : undefined;
  }
  return KINDS[field as keyof typeof KINDS];
}

/** The names an ordered field takes, in their order. */
export function orderOf(field: string): readonly string[] {
  return field === 'weekday' ? weekdays : riskLevels;
}

const TEXT_OPS = new Set<ConditionOp>(['prefix', 'suffix', 'contains', 'glob']);
const ORDER_OPS = new Set<ConditionOp>(['lt', 'lte', 'gt', 'gte']);
const LIST_OPS = new Set<ConditionOp>(['in', 'not_in']);

export const isTextOp = (op: ConditionOp) => TEXT_OPS.has(op);
export const isOrderOp = (op: ConditionOp) => ORDER_OPS.has(op);
export const isListOp = (op: ConditionOp) => LIST_OPS.has(op);

/** Whether an operator applies to a kind of field. */
function opApplies(kind: ConditionFieldKind, op: ConditionOp): boolean {
  if (kind === 'text' || kind === 'currency') return !isOrderOp(op);
  if (kind === 'number' || kind === 'ordered') return !isTextOp(op);
  return true;
}

export type ConditionScalar = string | number | boolean;
export type ConditionValue = ConditionScalar | ConditionScalar[];

/** One condition of a rule: the request's `field` compared with `value` by `op`. */
export interface Condition {
  field: string;
  op: ConditionOp;
  value: ConditionValue;
}

type Problem = { path: Array<string | number>; message: string } | undefined;

const FIELD_HELP = `must be one of ${conditionFields.join(', ')} or metadata.<key>`;

/** What is wrong with one value of a condition (a list's item, or the value itself), if anything. */
function scalarProblem(field: string, kind: ConditionFieldKind, op: ConditionOp, v: unknown): string | undefined {
  if (kind === 'number') {
    if (typeof v !== 'number' || !Number.isFinite(v)) return `must be a number for ${field}`;
    if (field === 'local_hour' && (!Number.isInteger(v) || v < 0 || v > 23)) return 'must be a whole hour from 0 to 23';
    if (field === 'amount' && (v < 0 || v > 1_000_000_000)) return 'must be an amount from 0 to 1000000000';
    return undefined;
  }
  if (kind === 'ordered') {
    const order = orderOf(field);
    return typeof v === 'string' && order.includes(v) ? undefined : `must be one of ${order.join(', ')}`;
  }
  if (kind === 'metadata' && isOrderOp(op))
    return typeof v === 'number' && Number.isFinite(v) ? undefined : `must be a number for ${op}`;
  if (kind === 'metadata' && !isTextOp(op)) {
    if (typeof v === 'number' && Number.isFinite(v)) return undefined;
    if (typeof v === 'boolean') return undefined;
  }
  if (typeof v !== 'string') return kind === 'metadata' ? 'must be a string, number or boolean' : 'must be a string';
  if (v.length === 0 && isTextOp(op)) return 'must not be empty';
  if (v.length > conditionLimits.text) return `must be at most ${conditionLimits.text} characters`;
  if (v.includes('\u0000')) return 'must not contain NUL characters';
  if (kind === 'currency' && !isTextOp(op) && !/^[A-Za-z]{3}$/.test(v)) return 'must be a three-letter currency code';
  return undefined;
}

/** The first thing wrong with a condition, with its path inside the condition; undefined when it is valid. */
function conditionProblem(c: { field: string; op: ConditionOp; value: unknown }): Problem {
  const kind = conditionFieldKind(c.field);
  if (!kind) return { path: ['field'], message: FIELD_HELP };
  if (!opApplies(kind, c.op))
    return {
      path: ['op'],
      message: `'${c.op}' does not apply to ${c.field} (${kind === 'number' ? 'a number' : kind === 'ordered' ? 'compared in order' : 'text'})`,
    };
  if (isListOp(c.op)) {
    if (!Array.isArray(c.value)) return { path: ['value'], message: `must be a list for ${c.op}` };
    if (c.value.length === 0 || c.value.length > conditionLimits.listValues)
      return { path: ['value'], message: `must have 1 to ${conditionLimits.listValues} values` };
    for (const [i, v] of c.value.entries()) {
      const message = scalarProblem(c.field, kind, c.op, v);
      if (message) return { path: ['value', i], message };
    }
    return undefined;
  }
  if (Array.isArray(c.value)) return { path: ['value'], message: `must be a single value for ${c.op}` };
  const message = scalarProblem(c.field, kind, c.op, c.value);
  return message ? { path: ['value'], message } : undefined;
}

const upperCurrency = (c: Condition): Condition => {
  if (c.field !== 'currency' || isTextOp(c.op)) return c;
  const upper = (v: ConditionScalar) => (typeof v === 'string' ? v.toUpperCase() : v);
  return { ...c, value: Array.isArray(c.value) ? c.value.map(upper) : upper(c.value) };
};

/** One condition of POST /rules: every field, operator and value checked, the detail naming what is wrong. */
export const ConditionBody = z
  .strictObject({
    field: z.string().max(conditionLimits.metadataKey + METADATA_FIELD_PREFIX.length, FIELD_HELP),
    op: z.enum(conditionOps),
    value: z.unknown(),
  })
  .superRefine((c, ctx) => {
    if (c.value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'is required' });
      return;
    }
    const problem = conditionProblem(c);
    if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .transform((c) => upperCurrency(c as Condition));

/** A rule's conditions: 1 to 10, all of which must hold. */
export const ConditionsBody = z
  .array(ConditionBody)
  .min(1, `must have 1 to ${conditionLimits.perRule} conditions`)
  .max(conditionLimits.perRule, `must have 1 to ${conditionLimits.perRule} conditions`);

/** A stored condition as GET /rules shows it. */
export const ConditionView = z.object({
  field: z.string(),
  op: z.enum(conditionOps),
  value: z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]),
});
