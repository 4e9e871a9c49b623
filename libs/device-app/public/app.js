// The device web app: what the holder of an account sees and does. Routes live in the location hash
// (#/requests, #/requests/{id}, #/rules, …) so that a notification or an agent can link to one request.
import { ApiError, NetworkError, deviceApi, publicCall } from './api.js';
import { GRANT_DURATIONS, confirmReasons, grantOf, grantState, money, parseRoute, quorumText } from './format.js';
import { linkedFirst } from './links.js';
import { sessionGrantWords, toolCallOf } from './tool-calls.js';
import { assertBatch, assertDecision, createPasskey, passkeysSupported } from './passkeys.js';
import { clearNotification, disablePush, enablePush, pushState, registerServiceWorker } from './push.js';
import {
  deviceTag,
  generateDeviceKey,
  loadDeviceKey,
  publicJwk,
  saveDeviceKey,
  signBatch,
  signDecision,
} from './signing.js';
import { el, facts, grantCard, pendingCard, requestDetail, requestGone, reviewItem, row, tick } from './views.js';
import { checkWholeChain, receiptKeys, renderHistory, resolvedByText } from './history.js';
import { connectionRow, consentForm } from './connect.js';
import { cibaClientPanel } from './ciba-client.js';
import { verifyReceipt } from './verify.js';
import { renderRules, wireRuleEditor } from './rules-view.js';
import { abilitiesOf, homeViewOf, membersById, namesUnknownMember, rememberMembers, viewsFor } from './people.js';
import { renderTeam, wireTeam } from './team-view.js';

const $ = (id) => document.getElementById(id);
const STORAGE = 'agent-auth-device-id';
/** The device's member as last read ({member_id, role}), so that a kept device opens offline as them. */
const MEMBER = 'agent-auth-member';
let api;
/** The signed-in device's member: {member_id, role, name}; what the app offers follows the role. */
let me = null;
let keyPair;
let passkeys = [];
let pending = new Map();
/** Whether the pending list has been read at least once: until then a linked request is unknown, not gone. */
let pendingRead = false;
let route = parseRoute(location.hash);
/** What the service offers beyond the basic API, learnt at sign-in (an older service has no standing grants). */
const features = { grants: false };
/** Requests ticked for a batch decision; the batch under review ({decision}) or null. */
const selected = new Set();
let review = null;
/** Critical or irreversible requests whose approval waits for the holder's second "yes", with what it would send. */
const confirming = new Map();
/** "Allow similar for…" choices per request, kept while the list is redrawn. */
const grantDrafts = new Map();
/** A tool call's answers in the making (session prefix, edited input, note) per request, kept across redraws. */
const toolDrafts = new Map();
/** How requests left pending while this page was open (from the event stream), so a link to one can say. */
const settled = new Map();
/** The request shown in full and what it was drawn from: redrawn only when that changes, so typing is not lost. */
let shownDetail = null;
/** Quorum requests this device has already approved (kept in this browser, so the button says so). */
const MINE = 'agent-auth-quorum-approved';
const mine = new Set(JSON.parse(localStorage.getItem(MINE) ?? '[]'));
const keepMine = () => localStorage.setItem(MINE, JSON.stringify([...mine]));

function say(text) {
  $('message').textContent = text;
  if (text) $('error').hidden = true;
}

function fail(err) {
  const text =
    err instanceof ApiError || err instanceof NetworkError
      ? err.message
      : err?.name === 'NotAllowedError'
        ? 'The passkey check was cancelled or timed out; nothing was sent.'
        : String(err?.message ?? err);
  $('error').textContent = text;
  $('error').hidden = false;
  $('message').textContent = '';
}

async function attempt(work) {
  try {
    await work();
  } catch (err) {
    fail(err);
  }
}

/** Redraws whichever view shows pending requests. */
function redraw() {
  if (route.view === 'pending') renderPending();
  if (route.view === 'request') renderRequest();
}

/** The approve buttons of a request, or its confirmation, as a card or the detail view draws them. */
function cardOptions(item, { selectable = false, detail = false } = {}) {
  return {
    selected: selected.has(item.id),
    onSelect: selectable ? toggleSelected : undefined,
    mine: mine.has(item.id),
    confirming: confirming.has(item.id),
    confirmingWhat: confirmingWords(confirming.get(item.id)),
    onConfirm: (it, button) => decide(it, 'approve', button, confirming.get(it.id), true),
    onCancel: (it) => {
      confirming.delete(it.id);
      redraw();
      document.querySelector(`[data-request="${CSS.escape(it.id)}"] button.approve`)?.focus();
    },
    grantDraft: detail && features.grants ? draftOf(grantDrafts, item.id) : undefined,
    toolDraft: detail ? draftOf(toolDrafts, item.id) : undefined,
  };
}

function draftOf(drafts, id) {
  if (!drafts.has(id)) drafts.set(id, {});
  return drafts.get(id);
}

/** What an approval waiting for its second "yes" would do besides approving, in words for the question. */
function confirmingWords(extra) {
  if (extra?.updated_input) return 'with your changes';
  if (extra?.grant?.match)
    return extra.grant.match.session_id ? 'and allow it for this session' : 'and allow this tool';
  return '';
}

/** The grant an approval creates: the one a tool call's choice made, else "Allow similar for…" on the detail view. */
function grantToSend(item, extra) {
  if (extra.grant) return extra.grant;
  if (route.view !== 'request' || toolCallOf(item)) return null;
  return grantOf(grantDrafts.get(item.id) ?? {});
}

/** The confirmation message of a decision, with what came with it and whether its receipt verifies. */
async function decidedText(item, result, { grant, extra }) {
  const call = toolCallOf(item);
  const verb =
    result.status === 'approved' ? (extra.updated_input ? 'Approved with your changes' : 'Approved') : 'Denied';
  const parts = [`${verb}: ${result.title}${result.user_verified ? ' (verified with your passkey)' : ''}`];
  if (grant?.match && call)
    parts.push(`${sessionGrantWords(call, grant)} allowed for ${grantWords(grant, item.currency)}`);
  else if (grant) parts.push(`similar requests allowed for ${grantWords(grant, item.currency)}`);
  if (extra.reason) parts.push('your note goes to the agent');
  return `${parts.join(' — ')}${await receiptVerdict(result.receipt)}`;
}

/**
 * Approves or denies: through this phone's passkey when the device has one, signed when it has a key. A critical or
 * irreversible request is approved only after a second, explicit "yes" (the confirmation shown in its place).
 * `extra` is what a tool call's answer adds: a session `grant`, an `updated_input`, or a deny's `reason`.
 */
async function decide(item, decision, button, extra = {}, confirmed = false) {
  if (decision === 'approve' && !confirmed && confirmReasons(item).length) {
    confirming.set(item.id, extra);
    redraw();
    document.getElementById(`confirm-${item.id}`)?.focus();
    return;
  }
  const buttons = button.parentElement.querySelectorAll('button');
  for (const b of buttons) b.disabled = true;
  button.setAttribute('aria-busy', 'true');
  await attempt(async () => {
    const body = {};
    if (item.content_hash) body.content_hash = item.content_hash;
    const totp = $('totp-code').value.trim();
    if (decision === 'approve' && totp) body.totp_code = totp;
    const grant = decision === 'approve' ? grantToSend(item, extra) : null;
    if (grant) body.grant = grant;
    if (decision === 'approve' && extra.updated_input) body.updated_input = extra.updated_input;
    if (decision === 'deny' && extra.reason) body.reason = extra.reason;
    const input = { requestId: item.id, decision, contentHash: item.content_hash };
    if (passkeys.length) {
      say('Confirm with your passkey…');
      Object.assign(body, await assertDecision({ ...input, passkeys }));
    }
    if (keyPair)
      Object.assign(
        body,
        await signDecision(keyPair.privateKey, {
          ...input,
          now: body.timestamp ? new Date(body.timestamp) : new Date(),
        }),
      );
    const result = await api.post(`/actions/${encodeURIComponent(item.id)}/${decision}`, body);
    $('totp-code').value = '';
    confirming.delete(item.id);
    grantDrafts.delete(item.id);
    toolDrafts.delete(item.id);
    if (result.status === 'pending' && result.quorum) {
      // A quorum request: this device's approval is counted, and it waits for another device.
      mine.add(item.id);
      keepMine();
      say(`Your approval is counted: ${quorumText(result.quorum)} for "${result.title}". It waits for another person.`);
    } else {
      clearNotification(item.id);
      say(await decidedText(item, result, { grant, extra }));
    }
    if (route.view === 'request') location.hash = '#/requests';
    else await loadPending();
  });
  for (const b of buttons) b.disabled = false;
  button.removeAttribute('aria-busy');
}

/** "1 hour, up to $50.00, 3 uses": a grant in words for the confirmation message. */
function grantWords(grant, currency) {
  const offered = GRANT_DURATIONS.find(([seconds]) => seconds === grant.duration_seconds);
  const parts = [offered?.[1] ?? `${Math.round(grant.duration_seconds / 60)} minutes`];
  if (grant.max_amount !== undefined) parts.push(`up to ${money(grant.max_amount, currency)}`);
  if (grant.max_uses !== undefined) parts.push(`${grant.max_uses} ${grant.max_uses === 1 ? 'use' : 'uses'}`);
  return parts.join(', ');
}

function toggleSelected(item, on) {
  if (on) selected.add(item.id);
  else selected.delete(item.id);
  renderBatchBar([...pending.values()]);
}

/** The batch bar (in the header while requests are ticked) and the "Select all" row above the list. */
function renderBatchBar(items) {
  const listed = route.view === 'pending' && review === null;
  $('select-row').hidden = !listed || items.length < 2;
  const n = selected.size;
  $('batch-bar').hidden = !listed || n === 0;
  $('batch-count').textContent = `${n} of ${items.length} selected`;
  $('select-all').textContent = n === items.length ? 'Clear selection' : 'Select all';
  // Short words on the phone's header; the full meaning for screen readers.
  $('batch-approve').textContent = `Approve ${n}…`;
  $('batch-approve').setAttribute('aria-label', `Review and approve ${n} selected`);
  $('batch-deny').textContent = `Deny ${n}…`;
  $('batch-deny').setAttribute('aria-label', `Review and deny ${n} selected`);
}

/** The requests of the batch under review, in the order of the pending list. */
const reviewed = () => [...pending.values()].filter((item) => selected.has(item.id));

/** The batch review: each selected request in full, then one confirmation for all of them. */
function renderReview() {
  const items = reviewed();
  if (review && !items.length) review = null;
  $('batch-review').hidden = review === null;
  if (!review) return;
  const verb = review.decision === 'approve' ? 'Approve' : 'Deny';
  $('batch-review-title').textContent = `${verb} these ${items.length} ${items.length === 1 ? 'request' : 'requests'}?`;
  $('batch-items').replaceChildren(...items.map((item) => reviewItem(item, mine.has(item.id))));
  $('batch-reason').hidden = review.decision !== 'deny';
  $('batch-reason-label').hidden = review.decision !== 'deny';
  const confirm = $('batch-confirm');
  confirm.className = review.decision;
  confirm.textContent = `${verb} all ${items.length}`;
}

function openReview(decision) {
  if (!selected.size) return;
  review = { decision };
  renderPending();
  $('batch-review-title').focus();
}

function closeReview() {
  review = null;
  $('batch-reason').value = '';
  renderPending();
  $('pending-title').focus();
}

/** Sends the batch under review with one proof (passkey, signing key, TOTP code) and says what became of each. */
async function confirmBatch(button) {
  if (!review) return;
  const { decision } = review;
  const items = reviewed();
  const buttons = button.parentElement.querySelectorAll('button');
  for (const b of buttons) b.disabled = true;
  button.setAttribute('aria-busy', 'true');
  await attempt(async () => {
    const requests = items.map((i) => (i.content_hash ? { id: i.id, content_hash: i.content_hash } : { id: i.id }));
    const body = { requests };
    const totp = $('totp-code').value.trim();
    if (decision === 'approve' && totp) body.totp_code = totp;
    const reason = $('batch-reason').value.trim();
    if (decision === 'deny' && reason) body.reason = reason;
    if (passkeys.length) {
      say(`Confirm with your passkey (one check for all ${items.length})…`);
      Object.assign(body, await assertBatch({ decision, requests, passkeys }));
    }
    if (keyPair)
      Object.assign(
        body,
        await signBatch(keyPair.privateKey, {
          decision,
          requests,
          now: body.timestamp ? new Date(body.timestamp) : new Date(),
        }),
      );
    const { results } = await api.post(`/actions/${decision}`, body);
    $('totp-code').value = '';
    const titles = new Map(items.map((i) => [i.id, i.title]));
    const done = results.filter((r) => r.status === 200 && r.action.status !== 'pending');
    const counted = results.filter((r) => r.status === 200 && r.action.status === 'pending');
    const refused = results.filter((r) => r.status !== 200);
    for (const r of done) clearNotification(r.id);
    for (const r of counted) mine.add(r.id);
    keepMine();
    const verb = decision === 'approve' ? 'Approved' : 'Denied';
    const parts = [`${verb} ${done.length} of ${results.length}`];
    if (counted.length) parts.push(`your approval counted on ${counted.length} that wait for another device`);
    if (refused.length)
      parts.push(`not done: ${refused.map((r) => `"${titles.get(r.id) ?? r.id}" (${r.detail})`).join('; ')}`);
    selected.clear();
    review = null;
    $('batch-reason').value = '';
    say(`${parts.join('; ')}.`);
    await loadPending();
    $('pending-title').focus();
  });
  for (const b of buttons) b.disabled = false;
  button.removeAttribute('aria-busy');
}

/** Checks the receipt of an answer in this browser: a few words for the confirmation message. */
async function receiptVerdict(receipt) {
  if (!receipt) return '';
  try {
    const claims = await verifyReceipt(receipt, await receiptKeys());
    return ` — receipt verified ✓ (${resolvedByText(claims)})`;
  } catch (err) {
    return ` — receipt does NOT verify: ${err.message}`;
  }
}

async function loadPending() {
  const { requests } = await api.get('/pending');
  // Approvals and routing name members by id: someone who joined since the app opened is read before drawing.
  if (namesUnknownMember(requests)) await api.get('/members').then(({ members }) => rememberMembers(members));
  pending = new Map(requests.map((r) => [r.id, r]));
  pendingRead = true;
  // What is no longer waiting leaves the batch, the confirmations and this device's quorum list.
  for (const set of [selected, confirming, mine, grantDrafts, toolDrafts])
    for (const id of [...set.keys()]) if (!pending.has(id)) set.delete(id);
  keepMine();
  $('pending-count').textContent = requests.length ? `(${requests.length})` : '';
  redraw();
}

function renderPending() {
  const items = [...pending.values()];
  $('pending-list').replaceChildren(
    ...items.map((item) => pendingCard(item, decide, cardOptions(item, { selectable: items.length > 1 }))),
  );
  $('pending-list').hidden = review !== null;
  $('pending-empty').hidden = items.length > 0;
  renderBatchBar(items);
  renderReview();
}

/** The linked request in full (kept as drawn while nothing about it changed), and below it what else is waiting. */
function renderRequest() {
  const { requests, found } = linkedFirst([...pending.values()], route.id);
  const others = found ? requests.slice(1) : requests;
  const main = found
    ? detailOf(requests[0])
    : pendingRead
      ? requestGone(route.id, settled.get(route.id))
      : el('p', { className: 'empty muted', textContent: 'Loading this request…' });
  const rest = el(
    'div',
    {},
    others.length ? el('h2', { className: 'also', textContent: `Also waiting (${others.length})` }) : null,
    others.length
      ? el('ul', { className: 'cards' }, ...others.map((item) => pendingCard(item, decide, cardOptions(item))))
      : null,
  );
  const body = $('request-body');
  if (body.firstChild === main) body.lastChild.replaceWith(rest);
  else body.replaceChildren(main, rest);
}

/**
 * The detail of a request: the one on the page when it shows the same request in the same state (so a field being
 * typed in keeps its focus and text when another request arrives), else drawn afresh.
 */
function detailOf(item) {
  const key = JSON.stringify([
    item.id,
    item.content_hash,
    item.quorum,
    confirming.has(item.id),
    mine.has(item.id),
    features.grants,
  ]);
  if (shownDetail?.key !== key || !shownDetail.node.isConnected)
    shownDetail = { key, node: requestDetail(item, decide, cardOptions(item, { detail: true })) };
  return shownDetail.node;
}

/** An empty list's state: what it is for, and how something gets into it. */
function emptyItem(title, text) {
  return el(
    'li',
    { className: 'empty' },
    el('p', { className: 'empty-title', textContent: title }),
    el('p', { className: 'muted', textContent: text }),
  );
}

/** The apps connected with OAuth, under Agents (hidden against a service without them). */
/** The agents as OpenID CIBA clients, each with its ping endpoint to set or clear. */
async function showCibaClients(agents) {
  const clients = await Promise.all(
    agents.map((a) => api.get(`/agents/${encodeURIComponent(a.agent_id)}/ciba-client`)),
  );
  const save = (client) => (endpoint) =>
    attempt(async () => {
      await api.patch(`/agents/${encodeURIComponent(client.client_id)}`, {
        backchannel_client_notification_endpoint: endpoint,
      });
      say(endpoint ? `${client.name} is pinged at ${endpoint} from now on.` : `${client.name} polls from now on.`);
      await showCibaClients(agents);
    });
  $('ciba-client-list').replaceChildren(...clients.map((c) => cibaClientPanel(c, save(c))));
  $('ciba-clients').hidden = clients.length === 0;
}

async function showConnections(agents) {
  let connections;
  try {
    ({ connections } = await api.get('/oauth/connections'));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return;
    throw err;
  }
  const names = new Map(agents.map((a) => [a.agent_id, a.name]));
  const disconnect = (c) => () =>
    attempt(async () => {
      await api.delete(`/oauth/connections/${encodeURIComponent(c.connection_id)}`);
      say(`${c.client_name} is disconnected.`);
      await show();
    });
  $('connections').hidden = false;
  $('connection-list').replaceChildren(
    ...(connections.length
      ? connections.map((c) => connectionRow(c, names.get(c.agent_id) ?? c.agent_id, disconnect(c)))
      : [emptyItem('No connected apps.', "Give an MCP client this service's /mcp address to connect it.")]),
  );
}

/** An error state in place of what could not be loaded (a list's item, or a block), with a way to try again. */
function loadFailed(tag, err) {
  const again = el('button', { type: 'button', textContent: 'Try again' });
  again.onclick = () => void show();
  return el(
    tag,
    { className: 'empty', role: 'alert' },
    el('p', { className: 'empty-title', textContent: `Could not load this: ${err.message}` }),
    again,
  );
}

/** An error state in place of a list. */
function listError(listId, err, retry) {
  $(listId).replaceChildren(loadFailed('li', err));
  if (retry) $('pending-empty').hidden = true;
}

const views = {
  async pending() {
    try {
      await loadPending();
    } catch (err) {
      listError('pending-list', err, true);
      throw err;
    }
    await offerNotifications();
  },
  async request() {
    try {
      await loadPending();
    } catch (err) {
      // Never read (offline, say): whether the request still waits is unknown, so it is not shown as gone.
      if (!pendingRead) $('request-body').replaceChildren(loadFailed('div', err));
      throw err;
    }
  },
  async rules() {
    await renderRules({ api, attempt, say, show, row, emptyItem });
  },
  async limits() {
    const { spending_limits: limits } = await api.get('/spending-limits');
    $('limit-list').replaceChildren(
      ...limits.map((l) =>
        row(
          `${l.period} ${l.amount_limit.toFixed(2)} USD — ${[l.action_type, l.agent_id].filter(Boolean).join(', ') || 'whole account'}`,
          `${l.period} limit`,
          () =>
            attempt(async () => {
              await api.delete(`/spending-limits/${l.limit_id}`);
              await show();
            }),
        ),
      ),
    );
    if (!limits.length)
      $('limit-list').replaceChildren(
        emptyItem('No spending limits.', 'A limit denies any purchase that would take spending past it.'),
      );
  },
  async vault() {
    const { credentials } = await api.get('/vault/credentials');
    $('credential-list').replaceChildren(
      ...credentials.map((c) =>
        row(`${c.service_name} (${c.auth_type}) → ${c.allowed_hosts.join(', ')}`, `credential ${c.service_name}`, () =>
          attempt(async () => {
            await api.delete(`/vault/credentials/${c.credential_id}`);
            await show();
          }),
        ),
      ),
    );
    if (!credentials.length)
      $('credential-list').replaceChildren(
        emptyItem(
          'No credentials stored.',
          'An agent can call a service with a stored secret once you approve the call.',
        ),
      );
  },
  async agents() {
    const { agents } = await api.get('/agents');
    $('agent-list').replaceChildren(
      ...agents.map((a) =>
        row(`${a.name} (${a.agent_id})`, `agent ${a.name}`, () =>
          attempt(async () => {
            await api.delete(`/agents/${a.agent_id}`);
            await show();
          }),
        ),
      ),
    );
    if (!agents.length)
      $('agent-list').replaceChildren(emptyItem('No agents.', 'Add one below: it gets its own API key.'));
    await showConnections(agents);
    await showCibaClients(agents);
  },
  async connect() {
    const box = $('connect-request');
    let request;
    try {
      request = await api.get(`/oauth/requests/${encodeURIComponent(route.id)}`);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 409)) throw err;
      box.replaceChildren(
        el('p', { className: 'empty-title', textContent: err.message }),
        el('p', { className: 'muted', textContent: 'Start connecting again from the app that asked.' }),
      );
      return;
    }
    const { agents } = await api.get('/agents');
    box.replaceChildren(
      consentForm(request, agents, (body) =>
        attempt(async () => {
          const { redirect_to } = await api.post('/oauth/consent', body);
          say(body.allow ? `Allowed: back to ${request.client_name}…` : `Denied: back to ${request.client_name}…`);
          location.assign(redirect_to);
        }),
      ),
    );
  },
  async grants() {
    const [{ grants }, { agents }] = await Promise.all([api.get('/grants'), api.get('/agents')]);
    const names = new Map(agents.map((a) => [a.agent_id, a.name]));
    // Live grants first (soonest to end first), then the ones that are over.
    const now = Date.now();
    const order = (g) => (grantState(g, now) === 'active' ? 0 : 1);
    grants.sort((a, b) => order(a) - order(b) || Date.parse(a.expires_at) - Date.parse(b.expires_at));
    $('grant-list').replaceChildren(
      ...(grants.length
        ? grants.map((g) => grantCard(g, names.get(g.agent_id) ?? g.agent_id, revokeGrant, now))
        : [
            emptyItem(
              'No standing grants.',
              'When you approve a request, "Allow similar for…" lets its agent do the same kind of thing without asking, for as long and as much as you choose.',
            ),
          ]),
    );
  },
  async team() {
    await renderTeam({ api, attempt, say, me });
  },
  async join() {
    prefillJoin();
  },
  async history() {
    $('chain-state').textContent = '';
    await renderHistory(api, $('history-list'));
  },
  async device() {
    const account = await api.get('/account');
    $('account').replaceChildren(
      ...facts([
        ['You', me ? `${me.name ?? 'a member'} (${me.role})` : null],
        ['Account', account.account_id],
        ['Plan', account.plan],
        ['Requests this month', account.actions_this_month],
        ['Monthly quota', account.monthly_quota ?? 'none'],
      ]).childNodes,
    );
    $('key-state').textContent = keyPair
      ? 'This browser also signs every decision with its own non-extractable key.'
      : 'No signing key in this browser.';
    // Passkeys, notifications and signing prove answers: a member who does not answer requests has none of them.
    if (!abilitiesOf(me?.role).answer) return;
    await showPasskeys();
    await showPushState();
  },
};

/** Revokes a standing grant at once. */
function revokeGrant(grant, button) {
  button.disabled = true;
  return attempt(async () => {
    await api.delete(`/grants/${encodeURIComponent(grant.grant_id)}`);
    say('Grant revoked: its agent asks again from now on.');
    await show();
  });
}

async function showPasskeys() {
  passkeys = (await api.get('/device/passkeys')).passkeys;
  const supported = passkeysSupported();
  $('add-passkey').disabled = !supported;
  $('add-passkey').textContent = passkeys.length ? 'Add another passkey' : "Use this phone's passkey";
  $('passkey-state').textContent = !supported
    ? 'This browser cannot use passkeys.'
    : passkeys.length
      ? 'Every approve and deny from this device is confirmed with a passkey (Face ID, fingerprint or screen lock).'
      : "Confirm every approve and deny with Face ID, fingerprint or your screen lock: set up this phone's passkey.";
  $('passkey-list').replaceChildren(
    ...passkeys.map((p) =>
      row(
        `Passkey added ${new Date(p.created_at).toLocaleDateString()}${p.last_used_at ? `, last used ${new Date(p.last_used_at).toLocaleString()}` : ''}`,
        `passkey added ${new Date(p.created_at).toLocaleString()}`,
        () =>
          attempt(async () => {
            await api.delete(`/device/passkeys/${p.passkey_id}`);
            say('Passkey removed.');
            await showPasskeys();
          }),
      ),
    ),
  );
}

const PUSH_TEXT = {
  unsupported:
    'This browser cannot receive notifications from the app. Install it to the home screen (or use another browser).',
  'not-configured': 'The service has no push key configured (VAPID): new requests show while the app is open.',
  blocked: "Notifications are blocked for this site; allow them in the browser's site settings.",
  on: 'New requests arrive on this phone as notifications, even when the app is closed.',
  off: 'Get a notification on this phone when an agent asks, even when the app is closed.',
};

async function currentPushState() {
  try {
    return await pushState(api);
  } catch {
    return { state: 'unsupported' };
  }
}

async function showPushState() {
  const { state, config } = await currentPushState();
  $('push-state').textContent = PUSH_TEXT[state];
  $('push-toggle').hidden = state !== 'on' && state !== 'off';
  $('push-toggle').textContent = state === 'on' ? 'Stop notifications on this phone' : 'Notify me on this phone';
  $('push-toggle').onclick = () =>
    attempt(async () => {
      if (state === 'on') {
        await disablePush(api);
        say('Notifications stopped on this phone.');
      } else if (await enablePush(api, config.vapid_public_key)) say('Notifications are on for this phone.');
      else say('Notifications were not allowed.');
      await showPushState();
    });
}

/** The "Notify me" button on the pending list, shown only while it would do something. */
async function offerNotifications() {
  const { state, config } = await currentPushState();
  $('notify').hidden = state !== 'off';
  $('notify').onclick = () =>
    attempt(async () => {
      say(
        (await enablePush(api, config.vapid_public_key))
          ? 'Notifications are on for this phone.'
          : 'Notifications were not allowed.',
      );
      $('notify').hidden = true;
    });
}

/** Shows the view the location hash names, and moves focus to its heading (so screen readers announce it). */
async function show(focus = false) {
  route = parseRoute(location.hash);
  // A view the member's role may not use is not offered: they land on their own first view instead of a refusal.
  if (route.view !== 'join' && !viewsFor(me?.role).has(route.view)) route = { view: homeViewOf(me?.role) };
  renderBatchBar([...pending.values()]);
  const section = route.view;
  for (const s of document.querySelectorAll('.view')) s.hidden = s.id !== section;
  for (const a of document.querySelectorAll('#tabs a')) {
    if (a.dataset.view === (section === 'request' ? 'pending' : section)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (section === 'request') renderRequest();
  await attempt(views[section]);
  if (focus)
    document.querySelector(section === 'request' ? '#request-heading, #request .back' : `#${section} h2`)?.focus();
}

function wireForms() {
  const formBody = (form, numbers = []) => {
    const body = {};
    for (const [k, v] of new FormData(form)) if (v !== '') body[k] = numbers.includes(k) ? Number(v) : v;
    return body;
  };
  const onSubmit = (id, build, path, after) => {
    $(id).onsubmit = (e) => {
      e.preventDefault();
      void attempt(async () => {
        const result = await api.post(path, build(e.target));
        e.target.reset();
        if (after) after(result);
        say('Saved.');
        await show();
      });
    };
  };
  wireRuleEditor({ api: { post: (...a) => api.post(...a) }, attempt, say, show });
  wireTeam({ api: { post: (...a) => api.post(...a) }, attempt, say, show });
  onSubmit('limit-form', (f) => formBody(f, ['amount_limit']), '/spending-limits');
  onSubmit(
    'credential-form',
    (f) => {
      const b = formBody(f);
      b.allowed_hosts = b.allowed_hosts
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean);
      return b;
    },
    '/vault/credentials',
  );
  onSubmit(
    'agent-form',
    (f) => formBody(f),
    '/agents',
    (agent) => {
      $('agent-secret').hidden = false;
      $('agent-secret').textContent =
        `Shown once — give these to the agent:\nAPI key: ${agent.api_key}\nWebhook secret: ${agent.webhook_secret}`;
    },
  );
  $('add-passkey').onclick = () =>
    attempt(async () => {
      const options = await api.post('/device/passkeys/options');
      say("Follow your phone's prompt to create the passkey…");
      await api.post('/device/passkeys', await createPasskey(options));
      say('Passkey added: every approve and deny from now on is confirmed with it.');
      await showPasskeys();
    });
  $('select-all').onclick = () => {
    const items = [...pending.values()];
    if (selected.size === items.length) selected.clear();
    else for (const item of items) selected.add(item.id);
    renderPending();
  };
  $('batch-approve').onclick = () => openReview('approve');
  $('batch-deny').onclick = () => openReview('deny');
  $('batch-cancel').onclick = () => closeReview();
  $('batch-clear').onclick = () => {
    selected.clear();
    renderPending();
  };
  $('batch-confirm').onclick = () => void confirmBatch($('batch-confirm'));
  $('verify-chain').onclick = () =>
    attempt(async () => {
      $('chain-state').textContent = 'Reading and checking the whole chain…';
      const verdict = await checkWholeChain(api);
      $('chain-state').textContent = verdict.text;
      $('chain-state').className = verdict.ok ? 'verified' : 'error';
    });
  $('make-key').onclick = () =>
    attempt(async () => {
      const pair = await generateDeviceKey();
      await api.put('/device/public-key', { public_key: await publicJwk(pair.publicKey) });
      await saveDeviceKey(await deviceTag(localStorage.getItem(STORAGE)), pair);
      keyPair = pair;
      say('Signing key registered: decisions from this browser are now signed, and unsigned ones refused.');
      await show();
    });
  $('enroll-totp').onclick = () =>
    attempt(async () => {
      const { secret, otpauth_url: url } = await api.post('/totp/enroll');
      $('totp-secret').hidden = false;
      $('totp-secret').textContent = `Add this to your authenticator app (shown once):\n${secret}\n${url}`;
    });
  $('sign-out').onclick = () => {
    localStorage.removeItem(STORAGE);
    localStorage.removeItem(MEMBER);
    location.hash = '';
    location.reload();
  };
}

/**
 * A request left pending (decided anywhere, expired, or withdrawn by its agent): it leaves the lists at once, before
 * the pending list is read again, and the holder looking at it is told why.
 */
function settle(action) {
  if (!action?.id) return;
  clearNotification(action.id);
  settled.set(action.id, action);
  const item = pending.get(action.id);
  if (!item) return;
  pending.delete(action.id);
  selected.delete(action.id);
  confirming.delete(action.id);
  if (action.status === 'cancelled')
    say(`${toolCallOf(item)?.agent ?? 'The agent'} withdrew "${item.title}": there is nothing to decide.`);
  $('pending-count').textContent = pending.size ? `(${pending.size})` : '';
  redraw();
}

/** Keeps the pending list current from the account's event stream, reconnecting after a drop. */
async function followEvents() {
  const abort = new AbortController();
  for (;;) {
    try {
      $('live').textContent = '● Live';
      await api.streamEvents((event) => {
        if (event.type === 'action.resolved') settle(event.action);
        void loadPending().catch(() => undefined);
      }, abort.signal);
    } catch {
      // Reconnect below.
    }
    $('live').textContent = $('offline').hidden ? '○ Reconnecting' : '○ Offline';
    await new Promise((r) => setTimeout(r, 3000));
    // Whatever happened while the stream was down is read afresh.
    passkeys = await api.get('/device/passkeys').then(
      (r) => r.passkeys,
      () => passkeys,
    );
    void loadPending().catch(() => undefined);
  }
}

/** Shows only the tabs and panels the member's role may use. */
function applyRole() {
  const allowed = viewsFor(me.role);
  for (const a of document.querySelectorAll('#tabs a'))
    a.hidden = !allowed.has(a.dataset.view) || (a.dataset.view === 'grants' && !features.grants);
  for (const panel of document.querySelectorAll('#device .answering')) panel.hidden = !abilitiesOf(me.role).answer;
}

/**
 * Who the device's member is: read from the account (every member may), which also checks a typed-in id; a kept id
 * opens offline too, as the member this browser last saw (the service decides anyway).
 */
async function whoAmI(kept) {
  try {
    const account = await api.get('/account');
    const who = { member_id: account.member_id, role: account.role ?? 'owner' };
    localStorage.setItem(MEMBER, JSON.stringify(who));
    return who;
  } catch (err) {
    if (!kept || !(err instanceof NetworkError)) throw err;
    return JSON.parse(localStorage.getItem(MEMBER) ?? 'null') ?? { member_id: null, role: 'owner' };
  }
}

/** Opens the app for a device id (an id typed in is checked before it is kept) as its member's role allows. */
async function start(deviceId, kept = false) {
  api = deviceApi(deviceId, '/api/v1', reachable);
  me = await whoAmI(kept);
  localStorage.setItem(STORAGE, deviceId);
  const can = abilitiesOf(me.role);
  await api.get('/members').then(
    ({ members }) => rememberMembers(members),
    () => undefined,
  );
  me.name = membersById.get(me.member_id)?.name;
  keyPair = await loadDeviceKey(await deviceTag(deviceId)).catch(() => undefined);
  passkeys = can.answer
    ? await api.get('/device/passkeys').then(
        (r) => r.passkeys,
        () => [],
      )
    : [];
  features.grants =
    can.manage &&
    (await api.get('/grants').then(
      () => true,
      () => false,
    ));
  applyRole();
  $('sign-in').hidden = true;
  $('tabs').hidden = false;
  say('');
  await show();
  if (can.answer) void followEvents();
}

/** "iPhone", "Android phone"…: a first name for the device this browser becomes. */
function deviceNameGuess() {
  const ua = navigator.userAgent;
  for (const [pattern, name] of [
    [/iPhone/, 'iPhone'],
    [/iPad/, 'iPad'],
    [/Android/, 'Android phone'],
    [/Macintosh/, 'Mac'],
    [/Windows/, 'Windows PC'],
  ])
    if (pattern.test(ua)) return name;
  return 'Browser';
}

function prefillJoin() {
  if (!$('join-device-name').value) $('join-device-name').value = deviceNameGuess();
  if (!route.params?.code) fail(new Error('This join link has no invite code: ask for a new invite.'));
}

/** Before a device is signed in: the join page of an invite's link, else the sign-in (and the company's sign-in). */
function showEntry() {
  route = parseRoute(location.hash);
  const joining = route.view === 'join';
  for (const s of document.querySelectorAll('.view')) s.hidden = !(joining && s.id === 'join');
  $('sign-in').hidden = joining;
  if (joining) {
    prefillJoin();
    $('join-title').focus();
  } else $('sign-in-title').focus();
}

/** Offers "Sign in with <provider>" when the service has the company's identity provider configured. */
async function offerCompanySignIn() {
  const res = await fetch('/auth/oidc').catch(() => null);
  if (!res?.ok) return;
  const { enabled, provider_name: name } = await res.json();
  if (!enabled) return;
  $('sso-link').textContent = `Sign in with ${name}`;
  $('sso-link').href = `/auth/oidc/start?device_name=${encodeURIComponent(deviceNameGuess())}`;
  $('sso').hidden = false;
}

/**
 * Back from the identity provider: the one-time ticket in the fragment is redeemed for this browser's device id
 * (taken out of the address first, so it stays in no history), or the refusal is shown.
 */
async function finishCompanySignIn(params) {
  history.replaceState(null, '', `${location.pathname}#/requests`);
  if (params.error) {
    showEntry();
    fail(new Error(params.error));
    return;
  }
  const { device_id: deviceId } = await publicCall('POST', '/auth/oidc/redeem', { ticket: params.ticket ?? '' });
  await start(deviceId);
  say(`Signed in: this browser is a device of ${me.name ?? 'yours'} now.`);
}

/** Joins the team with the invite's code: the new device's id is kept in this browser, and the app opens. */
function wireJoin() {
  $('join-form').onsubmit = (e) => {
    e.preventDefault();
    void attempt(async () => {
      const code = route.params?.code;
      if (!code) throw new Error('This join link has no invite code: ask for a new invite.');
      const { device_id: deviceId } = await publicCall('POST', '/api/v1/members/join', {
        code,
        device_name: $('join-device-name').value.trim(),
      });
      history.replaceState(null, '', `${location.pathname}#/requests`);
      await start(deviceId);
      say(`Welcome, ${me.name ?? 'you are in'}: this phone is one of your devices now.`);
    });
  };
}

/** The offline notice: shown while the service cannot be reached (or the browser knows it is offline). */
function reachable(ok) {
  const wasOffline = !$('offline').hidden;
  $('offline').hidden = ok && navigator.onLine;
  if (ok && wasOffline) $('error').hidden = true;
}

function showOffline() {
  reachable(navigator.onLine);
}

wireForms();
wireJoin();
$('sign-in-form').onsubmit = (e) => {
  e.preventDefault();
  void attempt(() => start($('device-id').value.trim()));
};
window.addEventListener('hashchange', () => {
  if (api) void show(true);
  else showEntry();
});
window.addEventListener('online', () => {
  showOffline();
  if (api) void show();
});
window.addEventListener('offline', showOffline);
showOffline();
setInterval(() => tick(), 1000);
void registerServiceWorker().catch(() => undefined);
navigator.serviceWorker?.addEventListener('message', (event) => {
  const message = event.data ?? {};
  if (message.type === 'open' && message.url) location.href = message.url;
  else if ((message.type === 'request-arrived' || message.type === 'request-settled') && api)
    void loadPending().catch(() => undefined);
});
const saved = localStorage.getItem(STORAGE);
void offerCompanySignIn();
if (route.view === 'signin') void attempt(() => finishCompanySignIn(route.params));
else if (saved && route.view !== 'join') void attempt(() => start(saved, true));
else showEntry();
