// The device web app: what the holder of an account sees and does. Everything an agent wrote (titles,
// descriptions, metadata) is shown with textContent, never parsed as HTML.
import { ApiError, deviceApi } from './api.js';
import { deviceTag, generateDeviceKey, loadDeviceKey, publicJwk, saveDeviceKey, signDecision } from './signing.js';

const $ = (id) => document.getElementById(id);
const STORAGE = 'agent-auth-device-id';
let api;
let keyPair;
let streamAbort;

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) node.append(c);
  return node;
}

function say(text, isError = false) {
  $('message').textContent = text;
  $('message').className = isError ? 'error' : '';
}

async function attempt(work) {
  try {
    await work();
  } catch (err) {
    say(err instanceof ApiError ? `${err.status}: ${err.message}` : String(err), true);
  }
}

function money(amount, currency) {
  return amount === null ? null : `${amount.toFixed(2)} ${currency}`;
}

function details(pairs) {
  const dl = el('dl');
  for (const [k, v] of pairs) if (v !== null && v !== undefined && v !== '') dl.append(el('dt', { textContent: k }), el('dd', { textContent: String(v) }));
  return dl;
}

async function decide(item, decision) {
  const body = {};
  if (item.content_hash) body.content_hash = item.content_hash;
  const totp = $('totp-code').value.trim();
  if (decision === 'approve' && totp) body.totp_code = totp;
  if (keyPair) Object.assign(body, await signDecision(keyPair.privateKey, { requestId: item.id, decision, contentHash: item.content_hash }));
  await attempt(async () => {
    const result = await api.post(`/actions/${encodeURIComponent(item.id)}/${decision}`, body);
    $('totp-code').value = '';
    say(`${result.title}: ${result.status} (${result.resolved_by})`);
    await showPending();
  });
}

function pendingCard(item) {
  const li = el('li', { className: item.risk_level },
    el('h3', { textContent: item.title }),
    details([
      ['agent', item.agent_name], ['type', item.action_type], ['risk', item.risk_level], ['amount', money(item.amount, item.currency)],
      ['recipient', item.recipient], ['description', item.description], ['reversible', item.reversible ? 'yes' : 'no'],
      ['content hash', item.content_hash], ['expires', new Date(item.expires_at).toLocaleString()],
      ['metadata', Object.keys(item.metadata).length ? JSON.stringify(item.metadata, null, 1) : null],
    ]),
  );
  const approve = el('button', { className: 'approve', textContent: 'Approve' });
  const deny = el('button', { className: 'deny', textContent: 'Deny' });
  approve.onclick = () => decide(item, 'approve');
  deny.onclick = () => decide(item, 'deny');
  li.append(approve, ' ', deny);
  return li;
}

async function showPending() {
  const { requests } = await api.get('/pending');
  $('pending-list').replaceChildren(...(requests.length ? requests.map(pendingCard) : [el('li', { textContent: 'Nothing is waiting.' })]));
  $('pending-count').textContent = requests.length ? `(${requests.length})` : '';
}

function row(text, onDelete) {
  const remove = el('button', { textContent: 'Delete' });
  remove.onclick = () => attempt(async () => {
    await onDelete();
    await show(currentTab);
  });
  return el('li', {}, el('span', { textContent: text }), remove);
}

const views = {
  pending: showPending,
  async rules() {
    const { rules } = await api.get('/rules');
    $('rule-list').replaceChildren(...rules.map((r) => row(
      `${r.name}: ${r.decision} — ${[r.action_type, r.agent_id, r.risk_level_max && `risk ≤ ${r.risk_level_max}`, r.amount_max_cents !== null && `amount ≤ ${(r.amount_max_cents / 100).toFixed(2)}`].filter(Boolean).join(', ') || 'everything'}`,
      () => api.delete(`/rules/${r.rule_id}`))));
  },
  async limits() {
    const { spending_limits: limits } = await api.get('/spending-limits');
    $('limit-list').replaceChildren(...limits.map((l) => row(`${l.period} ${l.amount_limit.toFixed(2)} USD — ${[l.action_type, l.agent_id].filter(Boolean).join(', ') || 'whole account'}`, () => api.delete(`/spending-limits/${l.limit_id}`))));
  },
  async vault() {
    const { credentials } = await api.get('/vault/credentials');
    $('credential-list').replaceChildren(...credentials.map((c) => row(`${c.service_name} (${c.auth_type}) → ${c.allowed_hosts.join(', ')}`, () => api.delete(`/vault/credentials/${c.credential_id}`))));
  },
  async agents() {
    const { agents } = await api.get('/agents');
    $('agent-list').replaceChildren(...agents.map((a) => row(`${a.name} (${a.agent_id})`, () => api.delete(`/agents/${a.agent_id}`))));
  },
  async device() {
    const account = await api.get('/account');
    $('account').replaceChildren(...details([['account', account.account_id], ['plan', account.plan], ['actions this month', account.actions_this_month], ['monthly quota', account.monthly_quota ?? 'none']]).childNodes);
    $('key-state').textContent = keyPair ? 'This browser signs every approve and deny with its own non-extractable key.' : 'No signing key in this browser.';
  },
};

let currentTab = 'pending';
async function show(tab) {
  currentTab = tab;
  for (const section of document.querySelectorAll('.tab')) section.hidden = section.id !== tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
  await attempt(views[tab]);
}

/** Form fields as a JSON body: empty fields left out, numbers as numbers. */
function formBody(form, numbers = []) {
  const body = {};
  for (const [k, v] of new FormData(form)) {
    if (v === '') continue;
    body[k] = numbers.includes(k) ? Number(v) : v;
  }
  return body;
}

function onSubmit(id, build, path, after) {
  $(id).onsubmit = (e) => {
    e.preventDefault();
    void attempt(async () => {
      const result = await api.post(path, build(e.target));
      e.target.reset();
      if (after) after(result);
      await show(currentTab);
    });
  };
}

function wireForms() {
  onSubmit('rule-form', (f) => {
    const b = formBody(f, ['amount_max']);
    if (b.amount_max !== undefined) b.amount_max_cents = Math.round(b.amount_max * 100);
    delete b.amount_max;
    return b;
  }, '/rules');
  onSubmit('limit-form', (f) => formBody(f, ['amount_limit']), '/spending-limits');
  onSubmit('credential-form', (f) => {
    const b = formBody(f);
    b.allowed_hosts = b.allowed_hosts.split(',').map((h) => h.trim()).filter(Boolean);
    return b;
  }, '/vault/credentials');
  onSubmit('agent-form', (f) => formBody(f), '/agents', (agent) => {
    $('agent-secret').hidden = false;
    $('agent-secret').textContent = `Shown once — give these to the agent:\nAPI key: ${agent.api_key}\nWebhook secret: ${agent.webhook_secret}`;
  });
  $('make-key').onclick = () => attempt(async () => {
    const pair = await generateDeviceKey();
    await api.put('/device/public-key', { public_key: await publicJwk(pair.publicKey) });
    await saveDeviceKey(await deviceTag(localStorage.getItem(STORAGE)), pair);
    keyPair = pair;
    say('Signing key registered: approvals from this device are now signed, and unsigned ones refused.');
    await show('device');
  });
  $('enroll-totp').onclick = () => attempt(async () => {
    const { secret, otpauth_url: url } = await api.post('/totp/enroll');
    $('totp-secret').hidden = false;
    $('totp-secret').textContent = `Add this to your authenticator app (shown once):\n${secret}\n${url}`;
  });
  $('sign-out').onclick = () => {
    localStorage.removeItem(STORAGE);
    location.reload();
  };
  for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => show(b.dataset.tab);
}

/** Keeps the pending list current from the account's event stream, reconnecting after a drop. */
async function followEvents() {
  streamAbort = new AbortController();
  for (;;) {
    try {
      $('live').textContent = '● live';
      await api.streamEvents(() => void (currentTab === 'pending' ? showPending() : showPending().catch(() => {})), streamAbort.signal);
    } catch (err) {
      if (streamAbort.signal.aborted) return;
    }
    $('live').textContent = '○ reconnecting';
    await new Promise((r) => setTimeout(r, 3000));
  }
}

async function start(deviceId) {
  api = deviceApi(deviceId);
  await api.get('/pending'); // checks the id before anything is kept
  localStorage.setItem(STORAGE, deviceId);
  keyPair = await loadDeviceKey(await deviceTag(deviceId)).catch(() => undefined);
  $('sign-in').hidden = true;
  $('tabs').hidden = false;
  say('');
  await show('pending');
  void followEvents();
}

wireForms();
$('sign-in-form').onsubmit = (e) => {
  e.preventDefault();
  void attempt(() => start($('device-id').value.trim()));
};
const saved = localStorage.getItem(STORAGE);
if (saved) void attempt(() => start(saved));
