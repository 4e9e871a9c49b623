// A POST of one plain tool call: which ones the process's shared server (json-exchange.ts) may answer, and how it
// answers them on the Node response, as the SDK's transport would.
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { type JSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { McpExchange } from './exchange.js';
import type { SharedToolServer } from './json-exchange.js';
import { isPlainToolCall, needsStream } from './json-rpc.js';

/**
 * The call of a POST the shared server may answer: one tools/call that needs no stream, with the headers the SDK's
 * transport accepts (Accept, Content-Type, protocol version, Host and Origin, checked as it checks them). Anything
 * else (an initialize, a batch, a waiting tool, a header it refuses) goes to the SDK's transport, which answers it,
 * its errors included.
 */
export function plainToolCall(exchange: McpExchange): JSONRPCRequest | undefined {
  const { body, request, allowedHosts, allowedOrigins } = exchange;
  if (!isPlainToolCall(body) || needsStream(body)) return;
  const { accept, host, origin, 'content-type': contentType } = request.headers;
  if (request.method !== 'POST' || !accept?.includes('application/json') || !accept.includes('text/event-stream'))
    return;
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return;
  if (!isJsonContentType(contentType)) return;
  if (allowedHosts?.length && !allowedHosts.includes(host ?? '')) return;
  if (origin && allowedOrigins?.length && !allowedOrigins.includes(origin)) return;
  return body;
}

/**
 * The answer to a call the client cancelled (notifications/cancelled) while its POST is still open: the server sends
 * none for it, but the POST must be answered; the client ignores it (LSP's RequestCancelled code).
 */
export const cancelledAnswer = (id: JSONRPCRequest['id']) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32800, message: 'Request cancelled by the client' },
});

/** One tool call served by the process's shared server, its answer written as the SDK's transport writes it. */
export async function serveSharedCall(
  exchange: McpExchange,
  shared: SharedToolServer,
  call: JSONRPCRequest,
): Promise<void> {
  const { response, cancellation } = exchange;
  const open = shared.call(call, {
    client: exchange.client,
    baseUrl: exchange.baseUrl,
    pollIntervalMs: exchange.pollIntervalMs,
  });
  const left = () => {
    if (!response.writableFinished) open.cancel();
  };
  response.once('close', left);
  const unlisten = cancellation?.onCancel(open.cancel);
  if (cancellation?.cancelled) open.cancel();
  try {
    const answer = await open.answer;
    if (response.destroyed || response.writableEnded) return;
    const body = JSON.stringify(answer ?? cancelledAnswer(call.id));
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  } finally {
    unlisten?.();
    response.off('close', left);
  }
}
