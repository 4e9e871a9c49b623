import { ValidationError, WaitTimeoutError } from './errors.js';
import { send, sleep, type TransportOptions } from './http.js';
import { FINAL_STATUSES } from './types.js';
import type {
  Action,
  ActionRequestInput,
  ApiCallInput,
  ApiCallResult,
  HistoryQuery,
  SpendingSummary,
  VaultResponse,
  VaultService,
} from './types.js';

export interface ClientOptions {
  /** The agent's API key (starts with aa_). */
  apiKey: string;
  /** The service's base URL, ending in /api/v1, e.g. http://127.0.0.1:8080/api/v1. */
  baseUrl: string;
  /** Retries after a 429 (honouring Retry-After), and of a transient failure (502/503/504, network error); default 3. */
  maxRetries?: number;
  /** Longest single wait for a Retry-After; default 60 000 ms. */
  maxRetryDelayMs?: number;
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /**
   * Time between status reads when the service cannot hold a wait (an older service); default 2000 ms
   * (docs/api-guide.md, Learning the outcome). Against a current service the answer comes as soon as the holder decides.
   */
  intervalMs?: number;
  /** Longest single held request (GET /actions/{id}?wait=S), in seconds, 1 to 60; default 50. */
  holdSeconds?: number;
  /** Overall limit; WaitTimeoutError after it. Default: none (the request expires on its own, at most after 1 h). */
  timeoutMs?: number;
  /** Stops waiting at once; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

const DEFAULT_HOLD_SECONDS = 50;
const MAX_HOLD_SECONDS = 60;

/** The agent-side client: request actions, learn their outcome, read history and spending, use the vault. */
export class AgentAuthClient {
  protected readonly transport: TransportOptions;
  /** False once the service refused a held wait (an older service): this client polls from then on. */
  private holdsWaits = true;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!options.baseUrl) throw new TypeError('baseUrl is required (it ends in /api/v1)');
    this.transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { 'x-api-key': options.apiKey },
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      maxRetries: options.maxRetries ?? 3,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    };
  }

  /**
   * Creates an action request and returns at once (status pending, or approved/denied when a rule or limit decided).
   * Every create carries an Idempotency-Key (a fresh one unless given), so a 502/503/504 or a network error is
   * retried with backoff and can never create the request twice.
   */
  requestAction(
    input: ActionRequestInput,
    options: { signal?: AbortSignal; idempotencyKey?: string } = {},
  ): Promise<Action> {
    const key = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    return send<Action>(this.transport, 'POST', '/actions', input, options.signal, {
      headers: { 'idempotency-key': key },
      retryTransient: true,
    });
  }

  /** Reads one request; a pending request past its expiry comes back expired. */
  getStatus(requestId: string, options: { signal?: AbortSignal } = {}): Promise<Action> {
    return send<Action>(this.transport, 'GET', `/actions/${encodeURIComponent(requestId)}`, undefined, options.signal);
  }

  /**
   * Withdraws the agent's own pending request (status `cancelled`, resolved_by `agent`): the holder no longer sees
   * it. Retried on transient failures; a request that already left pending answers 409 (a ConflictError).
   */
  cancelAction(requestId: string, options: { signal?: AbortSignal } = {}): Promise<Action> {
    return send<Action>(
      this.transport,
      'POST',
      `/actions/${encodeURIComponent(requestId)}/cancel`,
      {},
      options.signal,
      { retryTransient: true },
    );
  }

  /**
   * Waits until a request is approved, denied or expired and returns it in that state: held requests that the
   * service answers the moment the holder decides, or polling every `intervalMs` against a service without them.
   */
  async waitForResult(requestId: string, options: WaitOptions = {}): Promise<Action> {
    const intervalMs = options.intervalMs ?? 2000;
    const holdSeconds = Math.min(
      MAX_HOLD_SECONDS,
      Math.max(1, Math.floor(options.holdSeconds ?? DEFAULT_HOLD_SECONDS)),
    );
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let action = await this.getStatus(requestId, { signal: options.signal });
    for (;;) {
      if (FINAL_STATUSES.includes(action.status)) return action;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(action, options.timeoutMs!);
      const hold = Math.min(holdSeconds, Math.floor(left / 1000));
      if (this.holdsWaits && hold >= 1) {
        const asked = Date.now();
        const held = await this.heldRead(requestId, hold, options.signal);
        if (held) {
          action = held;
          // A service that ignores `wait` answers at once: then keep to the polling interval.
          if (held.status === 'pending' && Date.now() - asked < hold * 500)
            await sleep(Math.min(intervalMs, deadline - Date.now()), options.signal);
          continue;
        }
      }
      // Never sleep past the deadline, but read once more right at it.
      await sleep(Math.min(intervalMs, left), options.signal);
      action = await this.getStatus(requestId, { signal: options.signal });
    }
  }

  /** One held read; undefined (and no more held reads from this client) when the service refuses `wait`. */
  private async heldRead(requestId: string, seconds: number, signal?: AbortSignal): Promise<Action | undefined> {
    try {
      return await send<Action>(
        this.transport,
        'GET',
        `/actions/${encodeURIComponent(requestId)}?wait=${seconds}`,
        undefined,
        signal,
      );
    } catch (err) {
      if (err instanceof ValidationError && /\bwait\b/.test(err.detail)) {
        this.holdsWaits = false;
        return undefined;
      }
      throw err;
    }
  }

  /** Requests an action and waits for its outcome: the "ask before acting" call. */
  async requestAndWait(input: ActionRequestInput, options: WaitOptions = {}): Promise<Action> {
    const created = await this.requestAction(input, { signal: options.signal });
    if (FINAL_STATUSES.includes(created.status)) return created;
    return this.waitForResult(created.id, options);
  }

  /** Spending against every spending limit that applies to this agent. */
  getSpendingSummary(options: { signal?: AbortSignal } = {}): Promise<SpendingSummary> {
    return send<SpendingSummary>(this.transport, 'GET', '/agent/spending-summary', undefined, options.signal);
  }

  /** This agent's requests, newest first; a number is taken as the limit. */
  async getHistory(query: number | HistoryQuery = {}, options: { signal?: AbortSignal } = {}): Promise<Action[]> {
    const q = typeof query === 'number' ? { limit: query } : query;
    const params = new URLSearchParams();
    if (q.limit !== undefined) params.set('limit', String(q.limit));
    if (q.status) params.set('status', q.status);
    if (q.action_type) params.set('action_type', q.action_type);
    const suffix = params.size ? `?${params}` : '';
    const list = await send<{ actions: Action[] }>(
      this.transport,
      'GET',
      `/actions${suffix}`,
      undefined,
      options.signal,
    );
    return list.actions;
  }

  /** The credentials the holder keeps in the vault (names, auth types, allowed hosts; never the secrets). */
  async listVaultServices(options: { signal?: AbortSignal } = {}): Promise<VaultService[]> {
    const list = await send<{ services: VaultService[] }>(
      this.transport,
      'GET',
      '/vault/services',
      undefined,
      options.signal,
    );
    return list.services;
  }

  /** Creates the vault execution request for an API call (action_type system), without waiting. */
  requestApiCall(input: ApiCallInput, options: { signal?: AbortSignal } = {}): Promise<Action> {
    const method = input.method.toUpperCase();
    const metadata: Record<string, unknown> = {
      vault_execute: true,
      service_name: input.service_name,
      method,
      url: input.url,
    };
    if (input.headers !== undefined) metadata.headers = input.headers;
    if (input.body !== undefined) metadata.body = input.body;
    const title = (input.title ?? `${method} ${input.url} via ${input.service_name}`).slice(0, 200);
    return this.requestAction(
      {
        action_type: 'system',
        title,
        description: input.description,
        risk_level: input.risk_level,
        expires_in_seconds: input.expires_in_seconds,
        metadata,
      },
      options,
    );
  }

  /** Makes the approved call of a vault execution request; the service injects the credential. */
  executeApproved(requestId: string, options: { signal?: AbortSignal } = {}): Promise<VaultResponse> {
    return send<VaultResponse>(
      this.transport,
      'POST',
      `/vault/execute/${encodeURIComponent(requestId)}`,
      undefined,
      options.signal,
    );
  }

  /** Full vault flow: request the call, wait for the holder, then execute; response is null unless approved. */
  async executeApiCall(input: ApiCallInput, options: WaitOptions = {}): Promise<ApiCallResult> {
    const created = await this.requestApiCall(input, { signal: options.signal });
    const action = FINAL_STATUSES.includes(created.status) ? created : await this.waitForResult(created.id, options);
    if (action.status !== 'approved') return { action, response: null };
    return { action, response: await this.executeApproved(action.id, { signal: options.signal }) };
  }
}
