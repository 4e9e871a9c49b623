/**
 * Errors are values: an HTTP status, a stable code and a human-readable detail.
 * Services throw them once; the bus carries them; the gateway maps them once.
 */
export class AppError extends Error {
  readonly detail: string;

  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    const printable = printableDetail(detail);
    super(printable);
    this.detail = printable;
    this.name = 'AppError';
  }

  /** The wire form carried across the bus. */
  toJSON(): ErrorBody {
    return { status: this.status, code: this.code, detail: this.detail };
  }

  /** The body of the HTTP answer: the stable code beside the human-readable detail. */
  toBody(): { code: string; detail: string } {
    return { code: this.code, detail: this.detail };
  }
}

// C0 and C1 controls and the JSON-unsafe line separators: shown escaped, so a caller's text in a detail is readable
// and can never break a header, a log line or a terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point of this pattern
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A detail with every control character shown as an escape (\n, \u0000), so it is safe in any transport. */
export function printableDetail(detail: string): string {
  return detail.replace(CONTROL, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface ErrorBody {
  status: number;
  code: string;
  detail: string;
}

/** True when a value is an AppError (also across module copies). */
export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError || (value instanceof Error && value.name === 'AppError' && 'status' in value);
}
