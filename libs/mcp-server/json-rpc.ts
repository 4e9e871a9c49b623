// What the HTTP room reads of a POST's JSON-RPC messages before the SDK serves them: which calls it carries, which
// earlier calls it cancels, and whether its answer must stream.
import {
  isInitializeRequest,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** Tools that wait for the holder: their answer streams, so progress and keep-alives reach the client. */
const WAITING_TOOLS = new Set(['wait_for_approval', 'execute_api_call']);

/** The messages of a POST body: one message or a batch. */
function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/** The ids of the requests in a body (the calls this HTTP request answers). */
export function requestIdsOf(body: unknown): RequestId[] {
  return messagesOf(body)
    .filter(isJSONRPCRequest)
    .map((m) => m.id);
}

/** The request ids that the body's `notifications/cancelled` name: calls the client gave up, made in other POSTs. */
export function cancelledIdsOf(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of messagesOf(body)) {
    if (!isJSONRPCNotification(message) || message.method !== 'notifications/cancelled') continue;
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId === 'string' || typeof requestId === 'number') ids.push(requestId);
  }
  return ids;
}

/**
 * Whether the answer must be an SSE stream rather than one JSON body: a request asks for progress, or calls a tool
 * that waits (the stream's keep-alives hold the connection open through proxies while the holder decides).
 */
export function needsStream(body: unknown): boolean {
  return messagesOf(body).some((message) => {
    if (!isJSONRPCRequest(message)) return false;
    const params = message.params as { _meta?: { progressToken?: unknown }; name?: unknown } | undefined;
    if (params?._meta?.progressToken !== undefined) return true;
    return message.method === 'tools/call' && typeof params?.name === 'string' && WAITING_TOOLS.has(params.name);
  });
}

/** Whether the body opens a session (an `initialize` request). */
export function isInitialization(body: unknown): boolean {
  return messagesOf(body).some(isInitializeRequest);
}
