import { z } from 'zod';
import { StoredText } from '../validation.js';

/** The id of a request, rule, limit, credential or agent as it travels in a message. */
export const ById = StoredText().min(1).max(100);

/** The request of an endpoint that takes no arguments (health probes). */
export const Empty = z.object({}).loose();

/** One request-reply endpoint on the bus: who serves it, and the schemas of both directions. */
export interface EndpointDef<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly service: string;
  readonly name: string;
  readonly version: number;
  readonly request: Req;
  readonly response: Res;
  /**
   * Its answer is confidential (a credential, a token, a TOTP secret, an upstream's response, a request's metadata):
   * the requester sends a key of its own with every send of a call, and a serving side that keeps the outcome for a
   * resend keeps it sealed with that key, which is never stored.
   */
  readonly confidential?: boolean;
}

/** Declares an endpoint of a service's message catalog. */
export function defineEndpoint<Req extends z.ZodType, Res extends z.ZodType>(
  service: string,
  name: string,
  request: Req,
  response: Res,
  version = 1,
): EndpointDef<Req, Res> {
  return { service, name, request, response, version };
}

/** The same endpoint, its answer confidential (EndpointDef.confidential). */
export function confidential<E extends EndpointDef>(endpoint: E): E {
  return { ...endpoint, confidential: true };
}

/** The NATS subject an endpoint listens on, under a deployment's subject prefix. */
export function subjectOf(prefix: string, endpoint: Pick<EndpointDef, 'service' | 'name' | 'version'>): string {
  return `${prefix}.${endpoint.service}.v${endpoint.version}.${endpoint.name}`;
}

export const ErrorReply = z.object({ status: z.number().int(), code: z.string(), detail: z.string() });

/** Every reply on the bus: a result, or an error that already carries its HTTP status. */
export const ReplyEnvelope = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: ErrorReply }),
]);
export type ReplyEnvelope = z.infer<typeof ReplyEnvelope>;

/** A broadcast (not request-reply) message: every subscriber gets it. */
export interface EventDef<P extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly version: number;
  readonly payload: P;
}

/** Declares a broadcast event. */
export function defineEvent<P extends z.ZodType>(name: string, payload: P, version = 1): EventDef<P> {
  return { name, payload, version };
}

/** The NATS subject of a broadcast event. */
export function eventSubjectOf(prefix: string, event: Pick<EventDef, 'name' | 'version'>): string {
  return `${prefix}.events.v${event.version}.${event.name}`;
}
