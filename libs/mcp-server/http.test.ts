import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentAuthClient } from '@agent-auth/client';
import { describe, expect, it } from 'vitest';
import type { McpExchange } from './exchange.js';
import { serveMcpExchange } from './http.js';
import { plainToolCall } from './plain-call.js';
import { createSharedToolServer, type SharedToolServer } from './json-exchange.js';

const toolCall = (name = 'request_approval', extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 3,
  method: 'tools/call',
  params: { name, arguments: { title: 't' }, ...extra },
});
const HEADERS = {
  host: 'auth.example.com',
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

function exchange(change: { body?: unknown; headers?: Record<string, string | undefined>; method?: string } = {}) {
  const headers = { ...HEADERS, ...change.headers };
  return {
    request: { method: change.method ?? 'POST', headers } as unknown as IncomingMessage,
    body: change.body ?? toolCall(),
    client: new AgentAuthClient({ apiKey: 'aa_x', baseUrl: 'http://127.0.0.1:9/api/v1' }),
    baseUrl: 'https://auth.example.com/api/v1',
    allowedHosts: ['auth.example.com'],
    allowedOrigins: ['https://auth.example.com'],
  } as unknown as McpExchange;
}

describe('which POSTs the shared server answers', () => {
  it('takes one tool call that needs no stream, with the headers the transport accepts', () => {
    expect(plainToolCall(exchange())).toEqual(toolCall());
    expect(plainToolCall(exchange({ headers: { 'mcp-protocol-version': undefined } }))).toEqual(toolCall());
    expect(plainToolCall(exchange({ headers: { 'content-type': 'Application/JSON; charset=utf-8' } }))).toBeDefined();
    expect(plainToolCall(exchange({ headers: { origin: 'https://auth.example.com' } }))).toBeDefined();
  });

  it('leaves to the SDK transport every other message: a batch, another method, a waiting tool, progress', () => {
    expect(plainToolCall(exchange({ body: [toolCall()] }))).toBeUndefined();
    expect(plainToolCall(exchange({ body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }))).toBeUndefined();
    expect(
      plainToolCall(exchange({ body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } })),
    ).toBeUndefined();
    expect(plainToolCall(exchange({ body: toolCall('wait_for_approval') }))).toBeUndefined();
    expect(
      plainToolCall(exchange({ body: toolCall('check_approval', { _meta: { progressToken: 1 } }) })),
    ).toBeUndefined();
    expect(plainToolCall(exchange({ body: { ...toolCall(), jsonrpc: '1.0' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ body: { ...toolCall(), id: null } }))).toBeUndefined();
  });

  it('leaves to the SDK transport, to refuse as it does, any header it refuses', () => {
    expect(plainToolCall(exchange({ headers: { accept: 'application/json' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ headers: { accept: undefined } }))).toBeUndefined();
    expect(plainToolCall(exchange({ headers: { 'content-type': 'text/plain' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ headers: { 'mcp-protocol-version': '1999-01-01' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ headers: { host: 'evil.example' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ headers: { origin: 'https://evil.example' } }))).toBeUndefined();
    expect(plainToolCall(exchange({ method: 'GET' }))).toBeUndefined();
  });
});

/** A service that holds every request until its client leaves: what a call waits on while it is cancelled. */
async function holdingService() {
  const held: string[] = [];
  const left: string[] = [];
  const server = createServer((req) => {
    held.push(req.url ?? '');
    req.socket.once('close', () => left.push(req.url ?? ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { held, left, baseUrl: `http://127.0.0.1:${port}/api/v1`, close: () => server.closeAllConnections() };
}

/** /mcp as the gateway serves it: the body parsed, the calls cancellable from outside. */
async function mcpOn(service: { baseUrl: string }, shared: SharedToolServer) {
  const cancellations: Array<{ cancel(): void }> = [];
  const server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    let cancelled = false;
    const listeners = new Set<() => void>();
    const cancellation = {
      get cancelled() {
        return cancelled;
      },
      onCancel(listener: () => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    cancellations.push({
      cancel() {
        cancelled = true;
        for (const listener of listeners) listener();
      },
    });
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl: service.baseUrl, maxRetries: 0 });
    const baseUrl = service.baseUrl;
    await serveMcpExchange({ request, response, body: JSON.parse(text), client, baseUrl, cancellation, shared });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const post = (body: unknown) =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });
  return { post, cancellations, close: () => server.closeAllConnections() };
}

const until = async (what: () => boolean) => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(what()).toBe(true);
};

describe('a call the client cancels', () => {
  const check = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'check_approval', arguments: { request_id: `act_${id}` } },
  });

  for (const [label, body] of [
    ['on the shared server', check(41)],
    ['on a server of its own (a batch), whose JSON answer the SDK would never give', [check(42)]],
  ] as const) {
    it(`${label}: stops the call to the service and ends the POST with the cancelled error`, async () => {
      const service = await holdingService();
      const shared = await createSharedToolServer();
      const mcp = await mcpOn(service, shared);
      try {
        const answering = mcp.post(body);
        await until(() => service.held.length === 1);
        mcp.cancellations[0]!.cancel();
        const res = await answering;
        const answer = (await res.json()) as any;
        const single = Array.isArray(answer) ? answer[0] : answer;
        expect(res.status).toBe(200);
        expect(single).toEqual({
          jsonrpc: '2.0',
          id: Array.isArray(body) ? 42 : 41,
          error: { code: -32800, message: 'Request cancelled by the client' },
        });
        await until(() => service.left.length === 1);
      } finally {
        mcp.close();
        service.close();
        await shared.close();
      }
    });
  }
});
