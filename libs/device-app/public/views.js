// How a request looks: the agent's name first, the amount large, risk as a badge, a countdown to its expiry and
// relative times. Everything an agent wrote is set as textContent, never parsed as HTML.
import { countdown, money, relativeTime, requestHash, riskBadge } from './format.js';

/** A DOM element with properties and children. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('aria-') || k.startsWith('data-') || k === 'role' || k === 'datetime') node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

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
}

function facts(pairs) {
  const dl = el('dl', { className: 'facts' });
  for (const [k, v] of pairs)
    if (v !== null && v !== undefined && v !== '')
      dl.append(el('dt', { textContent: k }), el('dd', { textContent: String(v) }));
  return dl;
}

function headline(item, { linked = false, heading = 'h3', headingId } = {}) {
  const title = linked ? el('a', { href: requestHash(item.id), textContent: item.title }) : item.title;
  const headingProps = headingId ? { className: 'title', id: headingId, tabIndex: -1 } : { className: 'title' };
  const badge = riskBadge(item.risk_level);
  const amount = money(item.amount, item.currency);
  return [
    el(
      'p',
      { className: 'agent' },
      el('span', { className: 'agent-name', textContent: item.agent_name || item.agent_id }),
      ' · ',
      el('time', {
        className: 'relative',
        datetime: item.created_at,
        textContent: relativeTime(item.created_at),
        title: new Date(item.created_at).toLocaleString(),
      }),
    ),
    el(heading, headingProps, title),
    el(
      'div',
      { className: 'summary' },
      amount ? el('p', { className: 'amount', textContent: amount }) : null,
      el('span', { className: badge.className, textContent: badge.text }),
      countdownOf(item),
    ),
  ];
}

function decisionButtons(item, onDecide) {
  const approve = el('button', {
    type: 'button',
    className: 'approve',
    textContent: 'Approve',
    'aria-label': `Approve: ${item.title}`,
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

/** One card of the pending list: the essentials, a link to the whole request, approve and deny. */
export function pendingCard(item, onDecide) {
  return el(
    'li',
    { className: `card risk-${item.risk_level}`, 'data-request': item.id },
    ...headline(item, { linked: true }),
    decisionButtons(item, onDecide),
  );
}

/** The whole request, as its deep link (/app/#/requests/{id}) shows it. */
export function requestDetail(item, onDecide) {
  const metadata = Object.keys(item.metadata ?? {}).length ? JSON.stringify(item.metadata, null, 1) : null;
  return el(
    'article',
    { className: `card detail risk-${item.risk_level}`, 'data-request': item.id, 'aria-labelledby': 'request-heading' },
    ...headline(item, { heading: 'h2', headingId: 'request-heading' }),
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
    decisionButtons(item, onDecide),
  );
}

/** What the deep link shows when the request is not waiting any more (or was never this account's). */
export function requestGone(id) {
  return el(
    'div',
    { className: 'empty' },
    el('p', { className: 'empty-title', textContent: 'This request is not waiting any more.' }),
    el('p', {
      className: 'muted',
      textContent: `It was approved, denied or expired, or it belongs to another account (${id}).`,
    }),
  );
}

/** A row of a settings list with a delete button named after the row. */
export function row(text, label, onDelete) {
  const remove = el('button', { type: 'button', textContent: 'Delete', 'aria-label': `Delete ${label}` });
  remove.onclick = onDelete;
  return el('li', {}, el('span', { textContent: text }), remove);
}

export { facts };
