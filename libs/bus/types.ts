import type { z } from 'zod';
import type { EndpointDef, EventDef } from '@agent-auth/contracts';
import type { Logger } from 'pino';
import type { ActionEventStream } from './action-event-stream.js';
import type { EncodedJson } from './encoded-json.js';

/** What a handler logs through: pino's level methods, each line bound to the request. */
export type RequestLogger = Pick<Logger, 'trace' | 'debug' | 'info' | 'warn' | 'error'>;

export interface RequestContext {
  requestId: string;
  log: RequestLogger;
  /**
   * The id of the bus call this message belongs to, chosen by the requester and the same on every send of it: a
   * send after the first (`resent`) follows a replica that died or went silent, and may find what that one did.
   */
  callId?: string;
  /** True when the requester sent this call before (to a replica it took for dead, or before a reconnect). */
  resent?: boolean;
  /**
   * The requester's key of a call of a confidential endpoint, the same on every send: what the outcome kept for a
   * resend is sealed with (once.ts). Never logged, never stored.
   */
  callKey?: string;
}

/** Serves one endpoint: its answer as an object of the contract's type, or already encoded from one. */
export type Handler<E extends EndpointDef> = (
  request: z.output<E['request']>,
  ctx: RequestContext,
) => Promise<z.input<E['response']> | EncodedJson<z.input<E['response']>>>;

/** An endpoint paired with the function that serves it. */
export interface BoundHandler {
  endpoint: EndpointDef;
  handler: (request: unknown, ctx: RequestContext) => Promise<unknown>;
  /** An effect the serving scaffold answers once per call (once.ts): a send again gets the first outcome. */
  once?: boolean;
}

export interface ServiceSpec {
  /** Service name; also the queue group, so replicas share the load. */
  name: string;
  version: string;
  description: string;
  handlers: BoundHandler[];
  /** Most messages handled at once by this process (the micro API does not await handlers). */
  concurrency: number;
  log: Logger;
}

export interface ServedService {
  /** Stops taking new messages and waits for the ones in flight. */
  stop(): Promise<void>;
}

export interface RequestOptions {
  requestId?: string;
  timeoutMs?: number;
  /** How long to wait for a replica when none listens (NATS only; the bus's setting when absent): 0 for a probe. */
  replicaWaitMs?: number;
}

/** Request-reply and broadcast between services, over NATS or inside one process, with the same contracts. */
export interface Bus {
  readonly kind: 'nats' | 'in-process';
  request<E extends EndpointDef>(
    endpoint: E,
    payload: z.output<E['request']>,
    options?: RequestOptions,
  ): Promise<z.output<E['response']>>;
  /** The same request, its answer as the JSON bytes it was sent in: for a gateway passing a large list on unread. */
  requestEncoded<E extends EndpointDef>(
    endpoint: E,
    payload: z.output<E['request']>,
    options?: RequestOptions,
  ): Promise<EncodedJson>;
  serve(spec: ServiceSpec): Promise<ServedService>;
  publish<P extends z.ZodType>(event: EventDef<P>, payload: z.input<P>): void;
  subscribe<P extends z.ZodType>(event: EventDef<P>, listener: (payload: z.output<P>) => void): () => void;
  /** The durable stream of action events (JetStream, or in-process), fed by the actions service's outbox. */
  readonly actionEvents: ActionEventStream;
  /** Drains subscriptions and closes the connection. */
  close(): Promise<void>;
}
