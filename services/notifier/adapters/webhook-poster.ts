/** One outbound POST. The shape is that of @agent-auth/outbound's client, which enforces the SSRF rules. */
export interface WebhookPoster {
  /** Resolves with the response's status; throws (with a safe `detail`) when there is no response. */
  request(input: {
    url: string;
    method: string;
    headers: Record<string, string>;
    body: string | Buffer;
  }): Promise<{ statusCode: number }>;
  close(): Promise<void>;
}

/** The text of a failed attempt that is safe to store and show: the poster's detail, never a stack. */
export function describeFailure(err: unknown): string {
  const detail = (err as { detail?: unknown }).detail;
  if (typeof detail === 'string') return detail.slice(0, 500);
  const cause = (err as { cause?: { code?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return `request failed (${cause.code})`;
  if ((err as Error).name === 'TimeoutError') return 'the receiver did not answer in time';
  return 'request failed';
}
