// One error class per status of the error catalogue (docs/errors.md, including 402 for the plan quota), so agents can
// `catch (e) { if (e instanceof RateLimitedError) ... }` instead of comparing numbers.
import type { Action } from './types.js';

/** Any non-2xx answer of the service; `detail` is the service's own description. */
export class AgentAuthError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly body: unknown;
  constructor(status: number, detail: string, body?: unknown) {
    super(`${status}: ${detail}`);
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
    this.body = body;
  }
}

/** 400: a missing or invalid field, or malformed JSON; the detail names the field. */
export class ValidationError extends AgentAuthError {}
/** 401: missing or invalid API key. */
export class UnauthorizedError extends AgentAuthError {}
/** 402: the account's monthly action quota is used up. */
export class QuotaExceededError extends AgentAuthError {}
/** 403: content hash mismatch, host not allowed, and similar refusals. */
export class ForbiddenError extends AgentAuthError {}
/** 404: the request (or credential) does not exist or is not this agent's. */
export class NotFoundError extends AgentAuthError {}
/** 409: the request is already resolved or already executed. */
export class ConflictError extends AgentAuthError {}
/** 502: the upstream API failed during a vault execution. */
export class UpstreamError extends AgentAuthError {}

/** 429: too many requests, after the client's own retries ran out. */
export class RateLimitedError extends AgentAuthError {
  /** Seconds the service asked to wait (Retry-After), or null when it gave none. */
  readonly retryAfterSeconds: number | null;
  constructor(status: number, detail: string, body: unknown, retryAfterSeconds: number | null) {
    super(status, detail, body);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** waitForResult gave up before the request was resolved; the request itself is still pending. */
export class WaitTimeoutError extends Error {
  readonly action: Action;
  constructor(action: Action, timeoutMs: number) {
    super(`Action request '${action.id}' still ${action.status} after ${timeoutMs} ms`);
    this.name = 'WaitTimeoutError';
    this.action = action;
  }
}

const byStatus: Record<number, new (status: number, detail: string, body?: unknown) => AgentAuthError> = {
  400: ValidationError,
  401: UnauthorizedError,
  402: QuotaExceededError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  502: UpstreamError,
};

/** Parses Retry-After: the service sends whole seconds, but an HTTP date is accepted too. */
export function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** Builds the typed error for a non-2xx response body. */
export function errorFor(status: number, body: unknown, retryAfter: string | null): AgentAuthError {
  const detail =
    body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string'
      ? (body as { detail: string }).detail
      : typeof body === 'string' && body
        ? body.slice(0, 500)
        : `HTTP ${status}`;
  if (status === 429) return new RateLimitedError(status, detail, body, parseRetryAfter(retryAfter));
  const Ctor = byStatus[status] ?? AgentAuthError;
  return new Ctor(status, detail, body);
}
