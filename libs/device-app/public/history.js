// The History view: each resolved request of the account, who resolved it and how, and whether its receipt
// verifies (checked here, with WebCrypto, against the keys at /.well-known/jwks.json); each request's audit trail;
// and the whole audit chain checked against its signed head. Read from the audit chain (GET /audit), in which every
// resolution carries its receipt.
import { el, facts } from './views.js';
import { auditEventHash, verifyChain, verifyReceipt } from './verify.js';

const RESOLUTIONS = new Set(['approved', 'denied', 'expired', 'cancelled']);
const RECENT = 300;
let keys;

/** The published receipt keys, fetched once per page load (they change only when a key is added). */
export async function receiptKeys() {
  keys ??= fetch('/.well-known/jwks.json').then((r) =>
    r.ok ? r.json() : Promise.reject(new Error(`keys: HTTP ${r.status}`)),
  );
  return keys.catch((err) => {
    keys = undefined;
    throw err;
  });
}

/** Who resolved a request and how, in words, from its verified receipt. */
export function resolvedByText(claims) {
  const by = claims.resolved_by ?? '';
  if (claims.status === 'cancelled') return 'Cancelled by the agent';
  if (by === 'system') return 'Expired: nobody answered in time';
  if (by.startsWith('rule:')) return `Rule "${by.slice(5)}" ${claims.status === 'approved' ? 'approved' : 'denied'} it`;
  if (by.startsWith('grant:')) return `Approved by standing grant ${by.slice('grant:'.length)}`;
  if (by.startsWith('spending_limit:')) return `Denied by spending limit ${by.slice('spending_limit:'.length)}`;
  const how =
    {
      biometric: claims.user_verified ? 'passkey (biometric)' : 'biometric',
      totp: 'authenticator code',
      wallet_pay: 'wallet pay',
      user: 'by hand',
    }[by] ?? by;
  const signed = claims.device_signature ? ', signed by the device key' : '';
  const verb =
    claims.status === 'approved' ? (claims.updated_input_hash ? 'Approved with changes' : 'Approved') : 'Denied';
  return `${verb} on device ${claims.device_id} (${how}${signed})`;
}

/** A receipt's verdict line: verified (with its key), or why not. */
async function receiptLine(receipt) {
  if (!receipt)
    return {
      claims: null,
      node: el('p', { className: 'muted', textContent: 'No receipt (resolved before receipts existed).' }),
    };
  try {
    const claims = await verifyReceipt(receipt, await receiptKeys());
    return {
      claims,
      node: el('p', { className: 'verified', textContent: '✓ Receipt verified with the published keys' }),
    };
  } catch (err) {
    return {
      claims: null,
      node: el('p', { className: 'error', textContent: `✗ Receipt does not verify: ${err.message}` }),
    };
  }
}

/** One request's audit trail, each event's hash recomputed here. */
async function trailList(api, requestId) {
  const { events } = await api.get(`/actions/${encodeURIComponent(requestId)}/audit`);
  const items = await Promise.all(
    events.map(async (e) => {
      const ok = (await auditEventHash(e)) === e.hash;
      return el(
        'li',
        {},
        `#${e.seq} ${e.type} by ${e.actor}, ${new Date(e.at).toLocaleString()} `,
        el('span', { className: ok ? 'verified' : 'error', textContent: ok ? '✓ hash' : '✗ hash does not match' }),
      );
    }),
  );
  return el('ol', { className: 'trail', 'aria-label': `Audit trail of ${requestId}` }, ...items);
}

/** One resolved request: what it was, who resolved it and how, its receipt, and its trail on demand. */
async function resolutionCard(api, event) {
  const { claims, node } = await receiptLine(event.data?.receipt);
  const amount = claims?.amount_cents != null ? `${(claims.amount_cents / 100).toFixed(2)} ${claims.currency}` : null;
  const show = el('button', {
    type: 'button',
    textContent: 'Audit trail',
    'aria-label': `Audit trail of ${event.request_id}`,
  });
  const card = el(
    'li',
    { className: 'card', 'data-request': event.request_id },
    el('h3', {
      textContent: `${event.type[0].toUpperCase()}${event.type.slice(1)}: ${claims?.action_type?.replace('_', ' ') ?? 'request'}${amount ? ` ${amount}` : ''}`,
    }),
    el('p', {
      textContent: claims
        ? resolvedByText(claims)
        : event.type === 'cancelled'
          ? 'Cancelled by the agent'
          : `By ${event.actor}`,
    }),
    node,
    facts([
      ['When', new Date(event.at).toLocaleString()],
      ['Request id', event.request_id],
      ['Policy version', claims?.policy_version?.slice(0, 16)],
    ]),
    show,
  );
  show.onclick = async () => {
    show.disabled = true;
    try {
      card.append(await trailList(api, event.request_id));
      show.remove();
    } catch (err) {
      card.append(el('p', { className: 'error', textContent: `Could not load the trail: ${err.message}` }));
      show.disabled = false;
    }
  };
  return card;
}

/** Renders the most recent resolutions of the account into `list`. */
export async function renderHistory(api, list) {
  const head = await api.get('/audit/head');
  const { events } = await api.get(`/audit?after=${Math.max(0, head.seq - RECENT)}&limit=${RECENT}`);
  const resolutions = events.filter((e) => e.request_id && RESOLUTIONS.has(e.type)).reverse();
  const cards = await Promise.all(resolutions.map((e) => resolutionCard(api, e)));
  list.replaceChildren(
    ...(cards.length ? cards : [el('li', { className: 'muted', textContent: 'No request has been resolved yet.' })]),
  );
}

/**
 * Reads the whole chain page by page and checks it against its signed head (from the checkpoint the first page
 * carries, where retention cut the chain); the verdict in words.
 */
export async function checkWholeChain(api) {
  const head = await api.get('/audit/head');
  const events = [];
  let checkpoint;
  let after = 0;
  for (;;) {
    const page = await api.get(`/audit?after=${after}&limit=500`);
    checkpoint ??= page.checkpoint;
    events.push(...page.events);
    if (page.next_after === null) break;
    after = page.next_after;
  }
  const verdict = await verifyChain(
    events.filter((e) => e.seq <= head.seq),
    head,
    await receiptKeys(),
    { checkpoint },
  );
  const from = checkpoint ? ` after the checkpoint the service signed at event ${checkpoint.seq}` : '';
  return verdict.ok
    ? {
        ok: true,
        text: `✓ Audit chain verified: ${head.seq - (checkpoint?.seq ?? 0)} events${from}, each linked to the one before, up to the head the service signed.`,
      }
    : { ok: false, text: `✗ Audit chain broken at event ${verdict.seq ?? '(head)'}: ${verdict.reason}` };
}
