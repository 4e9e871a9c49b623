// How the app writes times, amounts and risk: pure functions, the same in the browser and in Node's tests.
import { requestIdFromHash } from './links.js';

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
  const tab = hash.replace(/^#\/?/, '').split('/')[0];
  return { view: ['rules', 'limits', 'vault', 'agents', 'history', 'device'].includes(tab) ? tab : 'pending' };
}

/** The link to one request inside the app. */
export function requestHash(id) {
  return `#/requests/${encodeURIComponent(id)}`;
}
