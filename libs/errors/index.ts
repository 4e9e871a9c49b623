import { type AppError, isAppError } from './app-error.js';
import { errors } from './catalogue.js';

export { AppError, isAppError, printableDetail, type ErrorBody } from './app-error.js';
export { errors, catalogue, type CatalogueEntry } from './catalogue.js';

// A lost or refused database connection: postgres.js's own codes, the socket's, and the server's refusals while it
// shuts down or starts (SQLSTATE class 08 connection exceptions, 57P01-57P03).
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  '57P01',
  '57P02',
  '57P03',
]);

/** True when an error says the database could not be reached (a restart, a failover), not that a query was wrong. */
export function isDatabaseUnavailable(value: unknown): boolean {
  const code = (value as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || /^08/.test(code));
}

/**
 * Turns anything thrown into an AppError: a lost database connection is a 503 the caller may retry; other unknown
 * errors become a generic 500 without leaking internals.
 */
export function toAppError(value: unknown): AppError {
  if (isAppError(value)) return value;
  if (isDatabaseUnavailable(value)) return errors.databaseUnavailable();
  return errors.internal();
}
