// The Rules view: the account's rules as sentences, a rule editor with conditions whose replay over the last 30 days
// is shown before it can be saved, the rules the history suggests (adopted with one tap), and the Cedar policies.
import { ApiError } from './api.js';
import { el } from './dom.js';
import { membersById, ruleRoutingLine } from './people.js';
import { CONDITION_FIELDS, changeWords, conditionOf, opsFor, replaySentence, ruleSentence } from './rule-words.js';

const $ = (id) => document.getElementById(id);
const MAX_CONDITIONS = 10;
const REPLAY_DAYS = 30;

/** The options of a select, the chosen one selected. */
function options(select, choices, chosen) {
  select.replaceChildren(
    ...choices.map((c) => el('option', { value: c.value, textContent: c.label, selected: c.value === chosen })),
  );
}

/** One condition's inputs: a field, a metadata key when the field is metadata, an operator, a value. */
function conditionRow(onChange, onRemove) {
  const field = el('select', { 'aria-label': 'Field' });
  const key = el('input', { 'aria-label': 'Metadata key', placeholder: 'key', hidden: true, maxLength: 200 });
  const op = el('select', { 'aria-label': 'Operator' });
  const value = el('input', { 'aria-label': 'Value', maxLength: 2000 });
  const remove = el('button', { type: 'button', textContent: 'Remove', 'aria-label': 'Remove this condition' });
  options(field, CONDITION_FIELDS, 'tool_name');
  const refresh = () => {
    const chosen = field.value === 'metadata' ? `metadata.${key.value}` : field.value;
    key.hidden = field.value !== 'metadata';
    const kept = op.value;
    options(op, opsFor(chosen), kept);
    const entry = CONDITION_FIELDS.find((f) => f.value === field.value);
    value.placeholder =
      op.value === 'in' || op.value === 'not_in'
        ? 'values, separated by commas'
        : entry?.order
          ? entry.order.join(', ')
          : field.value === 'local_hour'
            ? '0 to 23'
            : op.value === 'glob'
              ? '* for anything, ? for one character'
              : '';
  };
  field.onchange = () => {
    refresh();
    onChange();
  };
  for (const input of [key, op, value]) input.oninput = onChange;
  op.onchange = () => {
    refresh();
    onChange();
  };
  refresh();
  const li = el('li', { className: 'condition' }, field, key, op, value, remove);
  remove.onclick = () => onRemove(li);
  li.read = () => conditionOf({ field: field.value, key: key.value, op: op.value, raw: value.value });
  return li;
}

/** The rule the form describes, or the first thing missing from it. */
function draftOf(form) {
  const data = new FormData(form);
  const rule = { decision: data.get('decision') };
  const name = String(data.get('name') ?? '').trim();
  if (name) rule.name = name;
  for (const k of ['action_type', 'risk_level_max', 'agent_id']) if (data.get(k)) rule[k] = data.get(k);
  if (data.get('amount_max') !== '' && data.get('amount_max') !== null)
    rule.amount_max_cents = Math.round(Number(data.get('amount_max')) * 100);
  const conditions = [];
  for (const li of $('condition-list').children) {
    const read = li.read();
    if (read.error) return { error: read.error };
    conditions.push(read.condition);
  }
  if (conditions.length) rule.conditions = conditions;
  return { rule };
}

/**
 * Wires the rule editor: the sentence follows every change; "See what it would have done" replays the draft over
 * the last 30 days; "Add rule" saves only the draft whose replay is on the screen.
 */
export function wireRuleEditor({ api, attempt, say, show }) {
  const form = $('rule-form');
  let previewed = null;
  const stale = () => {
    const { rule, error } = draftOf(form);
    $('rule-sentence').textContent = error ? `Not yet a rule: ${error}.` : ruleSentence(rule);
    const current = rule ? JSON.stringify(rule) : null;
    $('rule-save').disabled = current === null || current !== previewed;
    if (current !== previewed) $('rule-replay').replaceChildren();
  };
  const addCondition = () => {
    const list = $('condition-list');
    if (list.children.length >= MAX_CONDITIONS) return;
    list.append(
      conditionRow(stale, (li) => {
        li.remove();
        stale();
      }),
    );
    $('add-condition').disabled = list.children.length >= MAX_CONDITIONS;
    stale();
  };
  $('add-condition').onclick = addCondition;
  form.oninput = stale;
  form.onchange = stale;
  $('rule-preview').onclick = () =>
    attempt(async () => {
      const { rule, error } = draftOf(form);
      if (error) throw new Error(`The rule is not complete: ${error}.`);
      $('rule-replay').replaceChildren(el('p', { className: 'muted', textContent: 'Replaying the last 30 days…' }));
      const view = await api.post('/rules/simulate', { rule, days: REPLAY_DAYS });
      previewed = JSON.stringify(rule);
      $('rule-replay').replaceChildren(replayBlock(view));
      stale();
    });
  form.onsubmit = (e) => {
    e.preventDefault();
    void attempt(async () => {
      const { rule } = draftOf(form);
      if (!rule || JSON.stringify(rule) !== previewed) throw new Error('See what the rule would have done first.');
      await api.post('/rules', { name: rule.name ?? ruleSentence(rule).slice(0, 200), ...rule });
      form.reset();
      $('condition-list').replaceChildren();
      $('add-condition').disabled = false;
      previewed = null;
      stale();
      say('Rule added.');
      await show();
    });
  };
  stale();
}

/** A replay's sentence and the requests it changes. */
function replayBlock(view) {
  return el(
    'div',
    { className: 'replay' },
    el('p', { className: 'replay-summary', textContent: replaySentence(view) }),
    view.changed.length
      ? el(
          'ul',
          { className: 'changes', 'aria-label': 'Requests it decides otherwise' },
          ...view.changed.map((c) => el('li', { textContent: changeWords(c) })),
        )
      : null,
  );
}

/** GET of an endpoint an older service lacks: null there (its part of the view is then hidden). */
async function optional(api, path) {
  try {
    return await api.get(path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Draws the rules as sentences, the suggestions and the Cedar policies. */
export async function renderRules({ api, attempt, say, show, row, emptyItem }) {
  const [{ rules }, { agents }, suggested, policies] = await Promise.all([
    api.get('/rules'),
    api.get('/agents'),
    optional(api, '/rules/suggestions'),
    optional(api, '/policies'),
  ]);
  const names = new Map(agents.map((a) => [a.agent_id, a.name]));
  $('rule-list').replaceChildren(
    ...(rules.length
      ? rules.map((r) =>
          withRouting(
            row(`${r.name}: ${ruleSentence(r, names)}`, `rule ${r.name}`, () =>
              attempt(async () => {
                await api.delete(`/rules/${r.rule_id}`);
                await show();
              }),
            ),
            r,
          ),
        )
      : [emptyItem('No rules: every request waits for you.', 'A rule approves or denies matching requests at once.')]),
  );
  $('suggestions').hidden = !suggested?.suggestions.length;
  $('suggestion-list').replaceChildren(
    ...(suggested?.suggestions ?? []).map((s) => suggestionCard(s, names, { api, attempt, say, show })),
  );
  $('policies').hidden = !policies;
  $('policy-list').replaceChildren(
    ...(policies?.policies.length
      ? policies.policies.map((p) =>
          el(
            'li',
            { className: 'policy' },
            el('details', {}, el('summary', { textContent: p.name }), el('pre', { textContent: p.cedar })),
          ),
        )
      : [emptyItem('No Cedar policies.', 'Policies as code are added with the API (POST /policies).')]),
  );
}

/** A rule's row with whom it routes requests to and where they escalate, when it names people. */
function withRouting(li, rule) {
  const line = ruleRoutingLine(rule, membersById);
  if (line) li.firstChild.append(el('small', { className: 'routing', textContent: line }));
  return li;
}

/** A suggested rule: why, what it says, what it would have done, and one tap to adopt it. */
function suggestionCard(s, names, { api, attempt, say, show }) {
  const adopt = el('button', { type: 'button', className: 'approve', textContent: 'Adopt this rule' });
  adopt.onclick = () => {
    adopt.disabled = true;
    void attempt(async () => {
      await api.post('/rules', s.rule);
      say(`Rule added: ${s.rule.name}.`);
      await show();
    }).finally(() => {
      adopt.disabled = false;
    });
  };
  return el(
    'li',
    { className: 'card suggestion' },
    el('p', { className: 'suggestion-why', textContent: s.summary }),
    el('p', { className: 'sentence', textContent: ruleSentence(s.rule, names) }),
    replayBlock(s.replay),
    adopt,
  );
}
