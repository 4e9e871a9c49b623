// What the HTTP room reads of a POST's JSON-RPC messages before the SDK serves them: which calls it carries, which
// earlier calls it cancels, and whether its answer must stream. Read by shape, not validated: the SDK validates
// what it serves, and a malformed message here only goes untracked (the SDK's guards, zod schemas, cost more than
// the rest of this reading on every POST).
import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** Tools that wait for the holder: their answer streams, so progress and keep-alives reach the client. */
const WAITING_TOOLS = new Set(['wait_for_approval', 'execute_api_call']);

interface MessageShape {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: { _meta?: { progressToken?: unknown }; name?: unknown; requestId?: unknown };
}

/** The messages of a POST body: one message or a batch. */
function messagesOf(body: unknown): MessageShape[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((m): m is MessageShape => typeof m === 'object' && m !== null && m.jsonrpc === '2.0');
}

const isRequestId = (id: unknown): id is RequestId => typeof id === 'string' || typeof id === 'number';
const isRequest = (m: MessageShape) => typeof m.method === 'string' && isRequestId(m.id);
const isNotification = (m: MessageShape) => typeof m.method === 'string' && !('id' in m);

/** The ids of the requests in a body (the calls this HTTP request answers). */
export function requestIdsOf(body: unknown): RequestId[] {
  return messagesOf(body)
    .filter(isRequest)
    .map((m) => m.id as RequestId);
}

/** The request ids that the body's `notifications/cancelled` name: calls the client gave up, made in other POSTs. */
export function cancelledIdsOf(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of messagesOf(body)) {
    if (!isNotification(message) || message.method !== 'notifications/cancelled') continue;
    const requestId = message.params?.requestId;
    if (isRequestId(requestId)) ids.push(requestId);
  }
  return ids;
}

/**
 * Whether the answer must be an SSE stream rather than one JSON body: a request asks for progress, or calls a tool
 * that waits (the stream's keep-alives hold the connection open through proxies while the holder decides).
 */
export function needsStream(body: unknown): boolean {
  return messagesOf(body).some((message) => {
    if (!isRequest(message)) return false;
    const params = message.params;
    if (params?._meta?.progressToken !== undefined) return true;
    return message.method === 'tools/call' && typeof params?.name === 'string' && WAITING_TOOLS.has(params.name);
  });
}

/** Whether the body opens a session (an `initialize` request). */
export function isInitialization(body: unknown): boolean {
  return messagesOf(body).some((m) => isRequest(m) && m.method === 'initialize');
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
const TOOL_CALL_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * Whether the body is one tools/call the SDK's server surely takes as a request, without `_meta`: stricter than its
 * own schema (no other key, an integer or string id, params an object), so that what passes here the server never
 * refuses as an unknown message (it would then answer nothing). Read by shape: the SDK's guard, a zod schema, cost
 * as much as the rest of the POST's reading.
 */
export function isPlainToolCall(body: unknown): body is JSONRPCRequest {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return false;
  const { id, params } = body;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return false;
  if (params !== undefined && (!isPlainObject(params) || '_meta' in params)) return false;
  for (const key in body) if (!TOOL_CALL_KEYS.has(key)) return false;
  return true;
}
