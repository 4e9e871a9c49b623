import {
  createOutboundClient,
  type OutboundClient,
  OutboundError,
  type OutboundFailure,
  type OutboundOptions,
} from './client.js';

/** A relayed call on the wire (the vault executor's `vault.relay` in libs/contracts). */
export interface RelayedCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body_base64: string | null;
  limits: { connect_timeout_ms: number; response_timeout_ms: number; max_response_bytes: number };
}

/** Its answer: the upstream's, or why there was none. */
export type RelayedAnswer =
  | { answered: true; status_code: number; headers: Record<string, string>; body_base64: string }
  | { answered: false; kind: OutboundFailure; detail: string };

export interface RelayedClientOptions {
  /** Hands a call to the relay (a bus request to the vault executor); rejects when the relay could not be reached. */
  send(call: RelayedCall): Promise<RelayedAnswer>;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  maxResponseBytes: number;
}

/**
 * An outbound client whose calls the vault executor makes: the same interface and the same failures as
 * createOutboundClient's, for a process that has no route to the internet itself. A relay that cannot be reached is
 * an `upstream` failure, which a webhook's retry schedule treats like any other.
 */
export function createRelayedClient(options: RelayedClientOptions): OutboundClient {
  const limits = {
    connect_timeout_ms: options.connectTimeoutMs,
    response_timeout_ms: options.responseTimeoutMs,
    max_response_bytes: options.maxResponseBytes,
  };
  return {
    async request(input) {
      const body = input.body ?? null;
      let answer: RelayedAnswer;
      try {
        answer = await options.send({
          url: input.url,
          method: input.method,
          headers: input.headers ?? {},
          body_base64: body === null ? null : Buffer.from(body).toString('base64'),
          limits,
        });
      } catch {
        throw new OutboundError('upstream', 'the outbound relay (the vault executor) did not answer');
      }
      if (!answer.answered) throw new OutboundError(answer.kind, answer.detail);
      return {
        statusCode: answer.status_code,
        headers: answer.headers,
        body: Buffer.from(answer.body_base64, 'base64'),
      };
    },
    close: async () => {},
  };
}

/**
 * A service's outbound client: relayed through the vault executor (`vault-executor`, the default: the process with
 * the one route out), or its own (`direct`). Either way the same rules and the same failures.
 */
export function serviceOutboundClient(input: {
  via: 'vault-executor' | 'direct';
  options: OutboundOptions;
  relay: RelayedClientOptions['send'];
}): OutboundClient {
  if (input.via === 'direct') return createOutboundClient(input.options);
  return createRelayedClient({ ...input.options, send: input.relay });
}
