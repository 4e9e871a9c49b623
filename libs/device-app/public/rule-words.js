// Rules in words: the conditions a holder picks (a field, an operator, a value) and the sentence they make, and
// what a replay found. Pure functions, tested in Node (rule-words.test.ts).

/** The fields a condition may read, as the editor offers them; `metadata` asks for a key too. */
export const CONDITION_FIELDS = [
  { value: 'tool_name', label: 'tool', kind: 'text' },
  { value: 'recipient', label: 'recipient', kind: 'text' },
  { value: 'title', label: 'title', kind: 'text' },
  { value: 'amount', label: 'amount', kind: 'number' },
  { value: 'currency', label: 'currency', kind: 'text' },
  { value: 'risk_level', label: 'risk level', kind: 'ordered', order: ['low', 'medium', 'high', 'critical'] },
  { value: 'local_hour', label: 'hour (your time zone)', kind: 'number' },
  {
    value: 'weekday',
    label: 'day of the week',
    kind: 'ordered',
    order: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
  },
  { value: 'metadata', label: 'metadata key…', kind: 'metadata' },
];

const OP_WORDS = {
  eq: 'is',
  neq: 'is not',
  in: 'is one of',
  not_in: 'is none of',
  prefix: 'starts with',
  suffix: 'ends with',
  contains: 'contains',
  glob: 'matches',
  lt: 'is below',
  lte: 'is at most',
  gt: 'is above',
  gte: 'is at least',
};
const HOUR_WORDS = { lt: 'is before', lte: 'is at or before', gt: 'is after', gte: 'is at or after' };
const TEXT_OPS = ['eq', 'neq', 'in', 'not_in', 'prefix', 'suffix', 'contains', 'glob'];
const ORDER_OPS = ['eq', 'neq', 'in', 'not_in', 'lt', 'lte', 'gt', 'gte'];

/** The field entry of a condition's field (`metadata.<key>` is the metadata entry). */
export function fieldOf(field) {
  return CONDITION_FIELDS.find((f) => f.value === (field.startsWith('metadata.') ? 'metadata' : field));
}

/** The operators a field takes, each with its words. */
export function opsFor(field) {
  const kind = fieldOf(field)?.kind ?? 'text';
  const ops = kind === 'text' ? TEXT_OPS : kind === 'metadata' ? [...TEXT_OPS, ...ORDER_OPS.slice(4)] : ORDER_OPS;
  return ops.map((op) => ({
    value: op,
    label: field === 'local_hour' ? (HOUR_WORDS[op] ?? OP_WORDS[op]) : OP_WORDS[op],
  }));
}

const isList = (op) => op === 'in' || op === 'not_in';
const hour = (h) => `${String(h).padStart(2, '0')}:00`;

/** One value as the sentence shows it. */
function valueWords(field, v) {
  if (field === 'local_hour') return hour(v);
  if (field === 'amount') return Number(v).toFixed(2);
  if (typeof v === 'string') return `“${v}”`;
  return String(v);
}

/** A condition in words: `recipient ends with “@ourcompany.com”`, `hour is before 06:00`. */
export function conditionWords(c) {
  const name = c.field.startsWith('metadata.')
    ? `metadata “${c.field.slice(9)}”`
    : (fieldOf(c.field)?.label ?? c.field).replace(' (your time zone)', '');
  const op = c.field === 'local_hour' ? (HOUR_WORDS[c.op] ?? OP_WORDS[c.op]) : OP_WORDS[c.op];
  const value = Array.isArray(c.value)
    ? c.value.map((v) => valueWords(c.field, v)).join(', ')
    : valueWords(c.field, c.value);
  return `${name} ${op} ${value}`;
}

const DECISION_WORDS = { auto_approve: 'Approve', auto_deny: 'Deny', ask: 'Ask a person about' };

/** A rule in one sentence: what it decides, for which requests, and when. */
export function ruleSentence(rule, agentNames = new Map()) {
  const verb =
    rule.decision === 'require_quorum' ? `Ask ${rule.quorum ?? 2} people for` : DECISION_WORDS[rule.decision];
  const what = rule.action_type ? `${rule.action_type} requests` : 'every request';
  const parts = [`${verb} ${what}`];
  if (rule.agent_id) parts.push(`of ${agentNames.get(rule.agent_id) ?? rule.agent_id}`);
  const limits = [];
  if (rule.risk_level_max) limits.push(`risk up to ${rule.risk_level_max}`);
  if (rule.amount_max_cents !== null && rule.amount_max_cents !== undefined)
    limits.push(`up to ${(rule.amount_max_cents / 100).toFixed(2)}`);
  if (limits.length) parts.push(`(${limits.join(', ')})`);
  if (rule.conditions?.length) parts.push(`when ${rule.conditions.map(conditionWords).join(' and ')}`);
  return parts.join(' ');
}

/**
 * A condition from the editor's inputs, or a message saying what is missing: lists split at commas, numbers read as
 * numbers where the field holds them (the service checks the rest, and its 400 names the condition).
 */
export function conditionOf({ field, key, op, raw }) {
  const name = field === 'metadata' ? `metadata.${(key ?? '').trim()}` : field;
  if (name === 'metadata.') return { error: 'name the metadata key' };
  const kind = fieldOf(name)?.kind;
  const numeric = kind === 'number' || (kind === 'metadata' && ['lt', 'lte', 'gt', 'gte'].includes(op));
  const one = (text) => {
    const t = text.trim();
    return numeric && t !== '' && !Number.isNaN(Number(t)) ? Number(t) : t;
  };
  const text = String(raw ?? '');
  if (text.trim() === '') return { error: `give a value for ${fieldOf(name)?.label ?? name}` };
  const value = isList(op)
    ? text
        .split(',')
        .map(one)
        .filter((v) => v !== '')
    : one(text);
  return { condition: { field: name, op, value } };
}

const OUTCOME_WORDS = { approve: 'approved at once', deny: 'denied at once', pending: 'left to you' };
const STATUS_WORDS = {
  approved: 'it was approved',
  denied: 'it was denied',
  pending: 'it is waiting',
  expired: 'it expired',
  cancelled: 'its agent withdrew it',
};

/** What a replay found, in one sentence: "Would have approved 214 of the last 30 days' 480 requests, …". */
export function replaySentence(view) {
  const days = view.days === 1 ? 'the last day' : `the last ${view.days} days`;
  const changed = view.changed_total === 1 ? 'it changes 1' : `it changes ${view.changed_total}`;
  return (
    `Would have approved ${view.approve} of ${days}' ${view.evaluated} requests, denied ${view.deny} and left ` +
    `${view.pending} to you; ${changed}.`
  );
}

/** One changed request: its title, then what today's rules do and what they would do with the draft. */
export function changeWords(change) {
  return `${change.title}: ${OUTCOME_WORDS[change.was]} → ${OUTCOME_WORDS[change.would_be]} (${STATUS_WORDS[change.status] ?? change.status})`;
}
