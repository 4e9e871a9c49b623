/** Response headers by lower-case name, read as a fetch Response's are (`get`). */
class AnswerHeaders {
  constructor(private readonly values: Record<string, string>) {}

  get(name: string): string | null {
    return this.values[name.toLowerCase()] ?? null;
  }
}

/**
 * An answer of the API to a call made in process, as the client reads a fetch Response (status, ok, headers, text,
 * json; no body stream). A web Response builds a readable stream for its body, which cost a tool call more than the
 * route's own answer shaping; this one holds the text it was given.
 */
export class InProcessResponse {
  readonly ok: boolean;
  readonly headers: AnswerHeaders;
  /** No stream: a client that cancels the body of an answer it will not read (a retried 503) has nothing to cancel. */
  readonly body = null;

  /**
   * `payload`: the body as text or bytes, or the answer's value itself ({ value }), which `json()` hands over as it
   * is (no text made to be parsed again in the same process) and `text()` writes out only if asked.
   */
  constructor(
    private readonly payload: string | Uint8Array | { value: unknown } | null,
    readonly status: number,
    headers: Record<string, string>,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = new AnswerHeaders(headers);
  }

  async text(): Promise<string> {
    const { payload } = this;
    if (payload === null) return '';
    if (typeof payload === 'string') return payload;
    if (payload instanceof Uint8Array)
      return Buffer.isBuffer(payload) ? payload.toString('utf8') : new TextDecoder().decode(payload);
    return JSON.stringify(payload.value);
  }

  async json(): Promise<unknown> {
    const { payload } = this;
    if (payload !== null && typeof payload === 'object' && !(payload instanceof Uint8Array)) return payload.value;
    return JSON.parse(await this.text());
  }

  /** As the fetch API types it: the client reads it as a Response and uses only what this one has. */
  asResponse(): Response {
    return this as unknown as Response;
  }
}
