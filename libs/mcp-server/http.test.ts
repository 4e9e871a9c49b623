import type { IncomingMessage } from 'node:http';
import { AgentAuthClient } from '@agent-auth/client';
import { describe, expect, it } from 'vitest';
import { type McpExchange, plainToolCall } from './http.js';

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
