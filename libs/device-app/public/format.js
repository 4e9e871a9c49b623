// How the app writes times, amounts and risk: pure functions, the same in the browser and in Node's tests.
import { connectRequestFromHash, requestIdFromHash } from './links.js';

/** "4:05" left until expiry (h:mm:ss beyond an hour), "expired" once past; urgent in the last minute. */
export function countdown(expiresAt, now = Date.now()) {
  const left = Math.floor((Date.parse(expiresAt) - now) / 1000);
  if (left <= 0) return { text: 'expired', spoken: 'expired', urgent: true, expired: true };
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const pad = (n) => String(n).padStart(2, '0');
  const text = h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
  const spoken = h ? `${h} h ${m} min` : m ? `${m} min ${s} s` : `${s} s`;
  return { text, spoken, urgent: left < 60, expired: false };
}

const UNITS = [
  ['year', 31_536_000],
  ['month', 2_592_000],
  ['week', 604_800],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "2 minutes ago", "just now", "in 3 hours": a time relative to now, in words. */
export function relativeTime(at, now = Date.now(), locale = 'en') {
  const seconds = Math.round((Date.parse(at) - now) / 1000);
  if (Math.abs(seconds) < 10) return 'just now';
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.trunc(seconds / size), unit);
  }
  return 'just now';
}

/** An amount in its currency ("$42.50", "€1,200.00"), or null when the request has none. */
export function money(amount, currency, locale = 'en-US') {
  if (amount === null || amount === undefined) return null;
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/** The risk badge's words ("High risk") and class ("risk-high"). */
export function riskBadge(risk) {
  return { text: `${risk.charAt(0).toUpperCase()}${risk.slice(1)} risk`, className: `badge risk-${risk}` };
}

/** The route a location hash names: the pending list, one request, or another tab. */
export function parseRoute(hash) {
  const id = requestIdFromHash(hash);
  if (id) return { view: 'request', id };
  const connecting = connectRequestFromHash(hash);
  if (connecting) return { view: 'connect', id: connecting };
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const tab = path.split('/')[0];
  // Joining with an invite and coming back from the identity provider carry their parameters in the fragment.
  if (tab === 'join' || tab === 'signin') return { view: tab, params: Object.fromEntries(new URLSearchParams(query)) };
  return {
    view: ['rules', 'limits', 'grants', 'vault', 'agents', 'history', 'device', 'team'].includes(tab) ? tab : 'pending',
  };
}

/** The link to one request inside the app. */
export function requestHash(id) {
  return `#/requests/${encodeURIComponent(id)}`;
}

/** Why a request asks for a second "yes" before it is approved: critical risk, no way back. Empty when neither. */
export function confirmReasons(item) {
  const reasons = [];
  if (item.risk_level === 'critical') reasons.push('it is critical risk');
  if (item.reversible === false) reasons.push('it cannot be undone');
  return reasons;
}

/** How long "Allow similar for…" may last, as offered in the app (the service allows 60 s to 30 days). */
export const GRANT_DURATIONS = [
  [900, '15 minutes'],
  [3600, '1 hour'],
  [8 * 3600, '8 hours'],
  [86_400, '1 day'],
  [7 * 86_400, '7 days'],
  [30 * 86_400, '30 days'],
];

/**
 * The `grant` of an approve body from the form's values (duration in seconds, budget in major units, uses), or
 * null when the holder chose "only this once". Budget and uses are optional; blanks are left out.
 */
export function grantOf({ duration, budget, uses }) {
  const seconds = Number(duration);
  if (!duration || !Number.isInteger(seconds) || seconds <= 0) return null;
  const grant = { duration_seconds: seconds };
  if (budget !== undefined && budget !== '' && Number(budget) > 0) grant.max_amount = Number(budget);
  if (uses !== undefined && uses !== '' && Number.isInteger(Number(uses)) && Number(uses) > 0)
    grant.max_uses = Number(uses);
  return grant;
}

/** Where a standing grant stands: revoked, expired, used up (budget or uses), or active. */
export function grantState(grant, now = Date.now()) {
  if (grant.revoked_at) return 'revoked';
  if (Date.parse(grant.expires_at) <= now) return 'expired';
  if (grant.max_uses !== null && grant.max_uses !== undefined && grant.uses >= grant.max_uses) return 'used up';
  if (grant.max_amount !== null && grant.max_amount !== undefined && grant.spent >= grant.max_amount) return 'used up';
  return 'active';
}

/** "1 of 2 approvals": a quorum's progress in words, or null when no quorum applies. */
export function quorumText(quorum) {
  if (!quorum) return null;
  return `${quorum.approvals.length} of ${quorum.required} approvals`;
}
