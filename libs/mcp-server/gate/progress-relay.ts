// Progress the caller sees on one token must grow (MCP spec). While a call waits for the holder, the gate reports
// progress under the caller's token; once approved, the wrapped server reports its own from zero under the same
// token, so its values are shifted past the gate's.
import type { ProgressToken, RequestId } from '@modelcontextprotocol/sdk/types.js';

export interface ProgressParams {
  progressToken: ProgressToken;
  progress: number;
  total?: number;
  message?: string;
  [key: string]: unknown;
}

export class ProgressRelay {
  /** Per token: the last progress the gate reported. */
  private readonly sent = new Map<ProgressToken, number>();
  /** Per held call: the token the gate reported under. */
  private readonly tokens = new Map<RequestId, ProgressToken>();

  /** The progress value to report for `seconds` waited on call `id`: the seconds, but always above the last one. */
  waited(id: RequestId, token: ProgressToken, seconds: number): number {
    const last = this.sent.get(token);
    const progress = last === undefined ? seconds : Math.max(last + 1, seconds);
    this.sent.set(token, progress);
    this.tokens.set(id, token);
    return progress;
  }

  /** A progress notification of the wrapped server, shifted past what the gate reported under the same token. */
  shift(params: ProgressParams): ProgressParams {
    const last = this.sent.get(params.progressToken);
    if (last === undefined) return params;
    const base = last + 1;
    return {
      ...params,
      progress: base + params.progress,
      ...(params.total === undefined ? {} : { total: base + params.total }),
    };
  }

  /** Call `id` is answered: its token may be reused by a later call. */
  done(id: RequestId): void {
    const token = this.tokens.get(id);
    if (token === undefined) return;
    this.tokens.delete(id);
    this.sent.delete(token);
  }
}
