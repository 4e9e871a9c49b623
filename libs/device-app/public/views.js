// How a request looks: the agent's name first, the amount large, risk as a badge, a countdown to its expiry and
// relative times. Everything an agent wrote is set as textContent, never parsed as HTML.
import { bindingLine } from './ciba-client.js';
import {
  GRANT_DURATIONS,
  confirmReasons,
  countdown,
  grantState,
  money,
  quorumText,
  relativeTime,
  requestHash,
  riskBadge,
} from './format.js';
import { el, facts } from './dom.js';
import { approverOf, membersById, waitingLine } from './people.js';
import { toolCallOf } from './tool-calls.js';
import { moreChoicesLink, toolChoices, toolFacts, toolPreview, toolWhere } from './tool-views.js';

/** The countdown element of a request; tick() keeps every one current. */
function countdownOf(item) {
  const node = el('p', { className: 'countdown', 'data-expires': item.expires_at });
  paintCountdown(node);
  return node;
}

function paintCountdown(node, now = Date.now()) {
  const left = countdown(node.dataset.expires, now);
  node.classList.toggle('urgent', left.urgent);
  node.replaceChildren(
    left.expired
      ? 'Expired'
      : el(
          'span',
          {},
          'Expires in ',
          el('time', { datetime: node.dataset.expires, textContent: left.text, 'aria-label': left.spoken }),
        ),
  );
}

/** Repaints every countdown and relative time on the page (called each second). */
export function tick(now = Date.now()) {
  for (const node of document.querySelectorAll('.countdown[data-expires]')) paintCountdown(node, now);
  for (const node of document.querySelectorAll('time.relative'))
    node.textContent = relativeTime(node.getAttribute('datetime'), now);
  for (const node of document.querySelectorAll('p.routing'))
    if (routed.has(node)) node.textContent = waitingLine(routed.get(node), membersById, now);
}

/**
 * The top of a request: who asks (for a tool call the coding agent, "Claude Code", and below the summary the tool
 * and its folder), when, the title, the amount, the risk and the time left.
 */
function headline(item, { linked = false, heading = 'h3', headingId } = {}) {
  const call = toolCallOf(item);
  const title = linked ? el('a', { href: requestHash(item.id), textContent: item.title }) : item.title;
  const headingProps = headingId ? { className: 'title', id: headingId, tabIndex: -1 } : { className: 'title' };
  const badge = riskBadge(item.risk_level);
  const amount = money(item.amount, item.currency);
  return [
    el(
      'p',
      { className: 'agent' },
      el('span', { className: 'agent-name', textContent: call?.agent ?? (item.agent_name || item.agent_id) }),
      ' · ',
      el('time', {
        className: 'relative',
        datetime: item.created_at,
        textContent: relativeTime(item.created_at),
        title: new Date(item.created_at).toLocaleString(),
      }),
    ),
    el(heading, headingProps, title),
    bindingLine(item),
    el(
      'div',
      { className: 'summary' },
      amount ? el('p', { className: 'amount', textContent: amount }) : null,
      el('span', { className: badge.className, textContent: badge.text }),
      countdownOf(item),
    ),
    call ? toolWhere(call) : null,
  ];
}

/** Words for how a device approved (a quorum approval's method). */
const METHOD_TEXT = { biometric: 'biometric', totp: 'authenticator code', wallet_pay: 'wallet pay' };

/** A quorum's progress: n of required, who approved and how; nothing when no quorum applies. */
export function quorumProgress(item, mine = false) {
  if (!item.quorum) return null;
  const { required, approvals } = item.quorum;
  return el(
    'div',
    { className: 'quorum' },
    el('p', {
      className: 'quorum-title',
      textContent: `Needs ${required} people to approve: ${quorumText(item.quorum)} so far`,
    }),
    el('progress', { max: required, value: approvals.length, 'aria-label': quorumText(item.quorum) }),
    approvals.length
      ? el(
          'ul',
          { className: 'quorum-list', 'aria-label': 'Approved by' },
          ...approvals.map((a) =>
            el(
              'li',
              {},
              `${approverOf(a, membersById)} · ${METHOD_TEXT[a.method] ?? a.method}${a.signed ? ' · signed' : ''} · `,
              el('time', { className: 'relative', datetime: a.at, textContent: relativeTime(a.at) }),
            ),
          ),
        )
      : null,
    mine ? el('p', { className: 'muted', textContent: 'You approved it; it waits for another person.' }) : null,
  );
}

/** The second "yes" a critical or irreversible request asks for before it is approved. */
function confirmation(item, { onConfirm, onCancel, confirmingWhat }) {
  const titleId = `confirm-${item.id}`;
  const yes = el('button', {
    type: 'button',
    className: 'approve',
    textContent: 'Yes, approve',
    'aria-label': `Yes, approve: ${item.title}`,
  });
  const no = el('button', { type: 'button', className: 'cancel', textContent: 'Cancel' });
  yes.onclick = () => onConfirm(item, yes);
  no.onclick = () => onCancel(item);
  const reasons = confirmReasons(item);
  return el(
    'div',
    { className: 'confirm', role: 'group', 'aria-labelledby': titleId },
    el('p', {
      className: 'confirm-title',
      id: titleId,
      tabIndex: -1,
      textContent: `Approve this${confirmingWhat ? ` ${confirmingWhat}` : ''}? Take a second look: ${reasons.join(' and ')}.`,
    }),
    el('div', { className: 'actions' }, yes, no),
  );
}

/**
 * Approve and deny, or (while the holder confirms a critical or irreversible request) the confirmation in their
 * place; `mine` when this device already gave its approval to a quorum.
 */
function decisionButtons(item, onDecide, opts = {}) {
  if (opts.confirming) return confirmation(item, opts);
  const approve = el('button', {
    type: 'button',
    className: 'approve',
    textContent: opts.mine ? 'Approved by you' : 'Approve',
    // The accessible name starts with the visible words (WCAG 2.5.3), then says which request.
    'aria-label': `${opts.mine ? 'Approved by you' : 'Approve'}: ${item.title}`,
    disabled: !!opts.mine,
  });
  const deny = el('button', {
    type: 'button',
    className: 'deny',
    textContent: 'Deny',
    'aria-label': `Deny: ${item.title}`,
  });
  approve.onclick = () => onDecide(item, 'approve', approve);
  deny.onclick = () => onDecide(item, 'deny', deny);
  return el('div', { className: 'actions' }, approve, deny);
}

/** The tick box that puts a request into the batch. */
function selectBox(item, opts) {
  if (!opts.onSelect) return null;
  const box = el('input', { type: 'checkbox', checked: !!opts.selected, 'aria-label': `Select: ${item.title}` });
  box.onchange = () => opts.onSelect(item, box.checked);
  return el('label', { className: 'pick' }, box, el('span', { textContent: 'Select' }));
}

/** The requests whose routing line is on the page, so that tick() counts their escalation down. */
const routed = new WeakMap();

/** Whom a routed request waits for and where it escalates. */
function routing(item) {
  const text = waitingLine(item, membersById);
  if (!text) return null;
  const node = el('p', { className: 'routing', textContent: text });
  routed.set(node, item);
  return node;
}

/** One card of the pending list: the essentials, a link to the whole request, approve and deny. */
export function pendingCard(item, onDecide, opts = {}) {
  const call = toolCallOf(item);
  return el(
    'li',
    { className: `card risk-${item.risk_level}`, 'data-request': item.id },
    ...headline(item, { linked: true }),
    call ? toolPreview(item, call) : null,
    routing(item),
    quorumProgress(item, opts.mine),
    selectBox(item, opts),
    decisionButtons(item, onDecide, opts),
    call && !opts.confirming && !opts.mine ? moreChoicesLink(item, call) : null,
  );
}

/** "Allow similar for…": the standing grant an approval may create, kept in `draft` across redraws. */
function grantChoice(item, draft) {
  const duration = el(
    'select',
    { name: 'duration' },
    el('option', { value: '', textContent: 'Only this once' }),
    ...GRANT_DURATIONS.map(([seconds, text]) => el('option', { value: String(seconds), textContent: text })),
  );
  const budget = el('input', { type: 'number', name: 'budget', min: '0.01', step: '0.01', inputMode: 'decimal' });
  const uses = el('input', { type: 'number', name: 'uses', min: '1', step: '1', inputMode: 'numeric' });
  duration.value = draft.duration ?? '';
  budget.value = draft.budget ?? '';
  uses.value = draft.uses ?? '';
  const keep = () => Object.assign(draft, { duration: duration.value, budget: budget.value, uses: uses.value });
  for (const input of [duration, budget, uses]) input.oninput = keep;
  duration.onchange = keep;
  const scope = [
    item.action_type.replace('_', ' '),
    item.recipient ? `to ${item.recipient}` : null,
    item.amount !== null && item.amount !== undefined ? `in ${item.currency}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  const details = el(
    'details',
    { className: 'grant', open: !!draft.open },
    el('summary', { textContent: 'Allow similar for…' }),
    el('p', {
      className: 'muted',
      textContent: `Approve this and let ${item.agent_name || item.agent_id} do the same (${scope}) without asking, for a while.`,
    }),
    el(
      'div',
      { className: 'grid' },
      el('label', {}, 'For', duration),
      el('label', {}, `Budget in ${item.currency} (optional)`, budget),
      el('label', {}, 'Number of uses (optional)', uses),
    ),
  );
  details.ontoggle = () => {
    draft.open = details.open;
  };
  return details;
}

/**
 * Everything about a request beyond its headline: why it asks for care, description, facts, metadata; for a tool
 * call, its tool input in full under headings of `level`.
 */
function requestFacts(item, level = 'h3') {
  const call = toolCallOf(item);
  const reasons = confirmReasons(item);
  const care = reasons.length
    ? el('p', { className: 'warning', textContent: `Take care: ${reasons.join(' and ')}.` })
    : null;
  if (call) return [care, ...toolFacts(item, call, level)];
  const metadata = Object.keys(item.metadata ?? {}).length ? JSON.stringify(item.metadata, null, 1) : null;
  return [
    care,
    item.description ? el('p', { className: 'description', textContent: item.description }) : null,
    facts([
      ['Type', item.action_type.replace('_', ' ')],
      ['Recipient', item.recipient],
      ['Reversible', item.reversible ? 'yes' : 'no'],
      ['Asked', new Date(item.created_at).toLocaleString()],
      ['Expires', new Date(item.expires_at).toLocaleString()],
      ['Content hash', item.content_hash],
      ['Request id', item.id],
    ]),
    metadata
      ? el('details', {}, el('summary', { textContent: 'Metadata' }), el('pre', { textContent: metadata }))
      : null,
  ];
}

/**
 * The whole request, as its deep link (/app/#/requests/{id}) shows it, with "Allow similar for…" on approve; a tool
 * call with its own answers instead (allow for this session, approve with changes, deny with a note).
 */
export function requestDetail(item, onDecide, opts = {}) {
  const call = toolCallOf(item);
  const open = !opts.mine && !opts.confirming;
  return el(
    'article',
    { className: `card detail risk-${item.risk_level}`, 'data-request': item.id, 'aria-labelledby': 'request-heading' },
    ...headline(item, { heading: 'h2', headingId: 'request-heading' }),
    ...requestFacts(item),
    routing(item),
    quorumProgress(item, opts.mine),
    !call && opts.grantDraft && open ? grantChoice(item, opts.grantDraft) : null,
    decisionButtons(item, onDecide, opts),
    call && opts.toolDraft && open ? toolChoices(item, call, opts.toolDraft, onDecide) : null,
  );
}

/** One request of a batch under review: shown in full, without buttons of its own. */
export function reviewItem(item, mine = false) {
  return el(
    'li',
    { className: `card detail risk-${item.risk_level}`, 'data-review': item.id },
    ...headline(item, { heading: 'h4' }),
    ...requestFacts(item, 'h5'),
    quorumProgress(item, mine),
  );
}

/** "Bash · session sess-1 · commands starting with “npm test”": the tool calls a grant is limited to, or null. */
function matchWords(match) {
  if (!match) return null;
  const parts = [
    match.tool_name,
    match.session_id ? `session ${match.session_id}` : null,
    match.command_prefix ? `commands starting with “${match.command_prefix}”` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : null;
}

/** A standing grant with its scope, what is left of it, and a revoke button while it is active. */
export function grantCard(grant, agentName, onRevoke, now = Date.now()) {
  const state = grantState(grant, now);
  const what = [grant.action_type.replace('_', ' '), grant.recipient ? `to ${grant.recipient}` : null, grant.currency]
    .filter(Boolean)
    .join(' · ');
  const capped = (v) => v !== null && v !== undefined;
  const budget = capped(grant.max_amount)
    ? `${money(grant.spent, grant.currency)} of ${money(grant.max_amount, grant.currency)} spent`
    : `${money(grant.spent, grant.currency)} spent, no budget cap`;
  const uses = capped(grant.max_uses)
    ? `${grant.uses} of ${grant.max_uses} uses`
    : `${grant.uses} ${grant.uses === 1 ? 'use' : 'uses'}, no cap`;
  const revoke =
    state === 'active'
      ? el('button', {
          type: 'button',
          className: 'deny',
          textContent: 'Revoke',
          'aria-label': `Revoke the grant for ${agentName}: ${what}`,
        })
      : null;
  if (revoke) revoke.onclick = () => onRevoke(grant, revoke);
  const stateClass = state.replace(' ', '-');
  return el(
    'li',
    { className: `card grant-card grant-${stateClass}`, 'data-grant': grant.grant_id },
    el('p', { className: 'agent' }, el('span', { className: 'agent-name', textContent: agentName }), ` · ${what}`),
    el(
      'div',
      { className: 'summary' },
      el('span', { className: `badge state-${stateClass}`, textContent: state }),
      state === 'active' ? countdownOf({ expires_at: grant.expires_at }) : null,
    ),
    facts([
      ['Only', matchWords(grant.match)],
      ['Budget', budget],
      ['Uses', uses],
      ['Until', new Date(grant.expires_at).toLocaleString()],
      ['Revoked', grant.revoked_at ? new Date(grant.revoked_at).toLocaleString() : null],
      ['Created from', grant.created_from],
    ]),
    revoke ? el('div', { className: 'actions' }, revoke) : null,
  );
}

/** How a request that left pending while the page was open ended, in words. */
const OUTCOME_TEXT = {
  approved: 'It was approved.',
  denied: 'It was denied.',
  expired: 'It expired: nobody answered in time.',
  cancelled: 'Cancelled by the agent: it withdrew the request (or stopped waiting for the answer).',
};

/**
 * What the deep link shows when the request is not waiting any more (or was never this account's); `outcome` when
 * the page saw it leave pending (`action.resolved` with its status).
 */
export function requestGone(id, outcome) {
  return el(
    'div',
    { className: 'empty' },
    el('p', { className: 'empty-title', textContent: 'This request is not waiting any more.' }),
    el('p', {
      className: 'muted',
      textContent:
        OUTCOME_TEXT[outcome?.status] ??
        `It was approved, denied or expired, or it belongs to another account (${id}).`,
    }),
  );
}

/** A row of a settings list with a delete button named after the row. */
export function row(text, label, onDelete) {
  const remove = el('button', { type: 'button', textContent: 'Delete', 'aria-label': `Delete ${label}` });
  remove.onclick = onDelete;
  return el('li', {}, el('span', { textContent: text }), remove);
}

export { el, facts };
