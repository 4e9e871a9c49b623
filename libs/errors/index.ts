/**
 * Errors are values: an HTTP status, a stable code and a human-readable detail.
 * Services throw them once; the bus carries them; the gateway maps them once.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'AppError';
  }

  /** The wire form carried across the bus and returned over HTTP. */
  toJSON(): ErrorBody {
    return { status: this.status, code: this.code, detail: this.detail };
  }
}

export interface ErrorBody {
  status: number;
  code: string;
  detail: string;
}

/** Builds AppError factories for one code/status pair, like fastify's error catalog. */
function defineError(code: string, status: number) {
  return (detail: string) => new AppError(status, code, detail);
}

/** The catalog: every error the service can answer with. */
export const errors = {
  badRequest: defineError('BAD_REQUEST', 400),
  unauthorized: defineError('UNAUTHORIZED', 401),
  quotaExceeded: defineError('QUOTA_EXCEEDED', 402),
  forbidden: defineError('FORBIDDEN', 403),
  notFound: defineError('NOT_FOUND', 404),
  methodNotAllowed: defineError('METHOD_NOT_ALLOWED', 405),
  conflict: defineError('CONFLICT', 409),
  payloadTooLarge: defineError('PAYLOAD_TOO_LARGE', 413),
  unsupportedMediaType: defineError('UNSUPPORTED_MEDIA_TYPE', 415),
  rateLimited: defineError('RATE_LIMITED', 429),
  internal: defineError('INTERNAL', 500),
  badGateway: defineError('BAD_GATEWAY', 502),
  unavailable: defineError('SERVICE_UNAVAILABLE', 503),
  timeout: defineError('GATEWAY_TIMEOUT', 504),
} as const;

/** True when a value is an AppError (also across module copies). */
export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError || (value instanceof Error && value.name === 'AppError' && 'status' in value);
}

/** Turns anything thrown into an AppError; unknown errors become a generic 500 without leaking internals. */
export function toAppError(value: unknown): AppError {
  if (isAppError(value)) return value;
  return errors.internal('Internal error');
}
