// The tools over Streamable HTTP, stateless: no session lives in a process, so any replica answers any request. A
// POST of one plain tool call goes to the process's shared server (json-exchange.ts); any other gets a server and
// the SDK's transport of its own. A call stops when its HTTP connection closes or when its `cancellation` says so
// (the client's notifications/cancelled, which may reach another replica).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { McpExchange } from './exchange.js';
import { needsStream, requestIdsOf } from './json-rpc.js';
import { cancelledAnswer, plainToolCall, serveSharedCall } from './plain-call.js';
import { createToolServer } from './server.js';

/** The body of a JSON-RPC error that answers no request in particular (`id` null), as the SDK writes its own. */
export function jsonRpcErrorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** A body that is not JSON: the JSON-RPC parse error, status 400, as the SDK answers it. */
export function answerParseError(response: ServerResponse): void {
  response.writeHead(400, { 'content-type': 'application/json' });
  response.end(jsonRpcErrorBody(ErrorCode.ParseError, 'Parse error: Invalid JSON'));
}

/**
 * The request as the transport reads it: method, URL and headers (Host and Origin for its rebinding guard, Accept,
 * the protocol version); the body is handed over already parsed.
 */
function webRequestOf(request: IncomingMessage): Request {
  const headers = new Headers();
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`, {
    method: request.method ?? 'POST',
    headers,
  });
}

/** Writes the transport's answer on the Node response: a JSON body at once, an event stream as it comes. */
async function writeAnswer(answer: Response, response: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!answer.body) return void response.writeHead(answer.status, headers).end();
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const body = Buffer.from(await answer.arrayBuffer());
    return void response.writeHead(answer.status, { ...headers, 'content-length': String(body.length) }).end(body);
  }
  response.writeHead(answer.status, headers);
  response.flushHeaders();
  // A client that leaves ends the pipeline, which cancels the stream: the transport then lets its calls go.
  await pipeline(Readable.fromWeb(answer.body as NodeReadableStream), response).catch(() => {});
}

/** What a POST whose calls were cancelled before the SDK's JSON answer came gets: the cancelled error of each. */
function answerCancelled(response: ServerResponse, body: unknown): void {
  if (response.destroyed || response.headersSent) return;
  const answers = requestIdsOf(body).map(cancelledAnswer);
  const text = JSON.stringify(Array.isArray(body) ? answers : answers[0]);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Serves a POST with a server and the SDK's transport of its own. Closing the server aborts its handlers' signals: a
 * held wait behind a tool ends at once, and a stream ends. A JSON answer the SDK would then never give (it drops a
 * cancelled call's answer) is given here, so the POST always ends.
 */
async function serveWithOwnServer(exchange: McpExchange): Promise<void> {
  const { request, response, cancellation } = exchange;
  const caller = { client: exchange.client, baseUrl: exchange.baseUrl, pollIntervalMs: exchange.pollIntervalMs };
  const server = createToolServer(() => caller);
  // The transport of web Requests and Responses, driven directly: the SDK's Node adapter around it converts both
  // through a general-purpose server layer on every POST, which a JSON answer written at once does not need.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !needsStream(exchange.body),
    enableDnsRebindingProtection: true,
    allowedHosts: exchange.allowedHosts,
    allowedOrigins: exchange.allowedOrigins,
  });
  let stopped!: () => void;
  const stopping = new Promise<undefined>((resolve) => {
    stopped = () => resolve(undefined);
  });
  // A response complete before the server closes has no handler left to stop: the server is simply let go (closing
  // it would build an error for the calls it no longer has, on every request).
  const stop = () => {
    void server.close().catch(() => {});
    stopped();
  };
  response.once('close', () => {
    if (!response.writableFinished) stop();
  });
  const unlisten = cancellation?.onCancel(stop);
  try {
    await server.connect(transport);
    if (cancellation?.cancelled) stop();
    const answering = transport.handleRequest(webRequestOf(request), { parsedBody: exchange.body });
    const answer = await Promise.race([answering, stopping]);
    if (answer) await writeAnswer(answer, response);
    else answerCancelled(response, exchange.body);
  } finally {
    unlisten?.();
  }
}

/** Serves one POST of JSON-RPC messages with the tools; resolves once the answer is complete or the client left. */
export async function serveMcpExchange(exchange: McpExchange): Promise<void> {
  const { response } = exchange;
  // JSON-RPC 2.0: an empty batch is an invalid request (the SDK would take it as "nothing to answer").
  if (Array.isArray(exchange.body) && exchange.body.length === 0) {
    response.writeHead(400, { 'content-type': 'application/json' });
    return void response.end(jsonRpcErrorBody(ErrorCode.InvalidRequest, 'Invalid Request: an empty batch'));
  }
  const call = exchange.shared && plainToolCall(exchange);
  if (call) return serveSharedCall(exchange, exchange.shared!, call);
  return serveWithOwnServer(exchange);
}
