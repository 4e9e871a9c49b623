// The tools over Streamable HTTP, stateless: every POST gets a server and a transport of its own, so no session lives
// in a process and any replica can answer any request. A call that waits for the holder stops when its HTTP
// connection closes or when `signal` aborts (the client's notifications/cancelled, which may reach another replica).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentAuthClient } from '@agent-auth/client';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { needsStream } from './json-rpc.js';
import { createToolServer } from './server.js';

export interface McpExchange {
  request: IncomingMessage;
  response: ServerResponse;
  /** The POST body, parsed from JSON. */
  body: unknown;
  /** The client the tools act through, as the caller's agent. */
  client: AgentAuthClient;
  /** The API's public base URL (ending in /api/v1), for the approval links the tools give. */
  baseUrl: string;
  /** Aborts the calls of this request (the client cancelled them). */
  signal?: AbortSignal;
  /**
   * DNS rebinding protection (the transport's own): the Host names the service answers to, when it knows them, and
   * the browser origins allowed to call it; a request naming another is refused (403).
   */
  allowedHosts?: string[];
  allowedOrigins?: string[];
  pollIntervalMs?: number;
}

/** The body of a JSON-RPC error that answers no request in particular (`id` null), as the SDK writes its own. */
export function jsonRpcErrorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A body that is not JSON: the JSON-RPC parse error, status 400, as the SDK answers it. */
export function answerParseError(response: ServerResponse): void {
  response.writeHead(400, { 'content-type': 'application/json' });
  response.end(jsonRpcErrorBody(ErrorCode.ParseError, 'Parse error: Invalid JSON'));
}

/** Serves one POST of JSON-RPC messages with the tools; resolves once the answer is complete or the client left. */
export async function serveMcpExchange(exchange: McpExchange): Promise<void> {
  const { request, response, signal } = exchange;
  // JSON-RPC 2.0: an empty batch is an invalid request (the SDK would take it as "nothing to answer").
  if (Array.isArray(exchange.body) && exchange.body.length === 0) {
    response.writeHead(400, { 'content-type': 'application/json' });
    return void response.end(jsonRpcErrorBody(ErrorCode.InvalidRequest, 'Invalid Request: an empty batch'));
  }
  const server = createToolServer(exchange.client, {
    baseUrl: exchange.baseUrl,
    pollIntervalMs: exchange.pollIntervalMs,
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !needsStream(exchange.body),
    enableDnsRebindingProtection: true,
    allowedHosts: exchange.allowedHosts,
    allowedOrigins: exchange.allowedOrigins,
  });
  // Closing the server aborts its handlers' signals: a held wait behind a tool ends at once. The response closes
  // when it is complete, too: then the server is let go.
  const stop = () => void server.close().catch(() => {});
  response.once('close', stop);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    await server.connect(transport);
    if (signal?.aborted) return stop();
    await transport.handleRequest(request, response, exchange.body);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
