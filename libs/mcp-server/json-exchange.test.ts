import { AgentAuthClient } from '@agent-auth/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callerOfCall, ExchangeTransport } from './json-exchange.js';

const callerNamed = (name: string) => ({
  client: new AgentAuthClient({ apiKey: `aa_${name}`, baseUrl: 'http://127.0.0.1:9/api/v1' }),
  baseUrl: `https://${name}.example/api/v1`,
});
const call = (id: number | string, name: string, args: Record<string, unknown> = {}): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The SDK's server on the transport, with tools that say whom they serve and that wait to be stopped. */
async function serverOn(transport: ExchangeTransport) {
  const server = new McpServer({ name: 't', version: '0' });
  const stopped: string[] = [];
  server.registerTool('whoami', { inputSchema: { delay_ms: z.number() } }, async ({ delay_ms }, extra) => {
    await new Promise((r) => setTimeout(r, delay_ms));
    return { content: [{ type: 'text', text: callerOfCall(extra).baseUrl }] };
  });
  server.registerTool(
    'hold',
    {},
    (extra) =>
      new Promise((resolve) => {
        extra.signal.addEventListener('abort', () => {
          stopped.push(callerOfCall(extra).baseUrl);
          resolve({ content: [{ type: 'text', text: 'stopped' }] });
        });
      }),
  );
  await server.connect(transport);
  return { server, stopped };
}

describe('the shared server transport', () => {
  it('answers each caller under its own id, however the ids of callers collide', async () => {
    const transport = new ExchangeTransport();
    await serverOn(transport);
    const a = transport.call(call(1, 'whoami', { delay_ms: 30 }), callerNamed('a'));
    const b = transport.call(call(1, 'whoami', { delay_ms: 5 }), callerNamed('b'));
    const c = transport.call(call('x', 'whoami', { delay_ms: 1 }), callerNamed('c'));
    const [ra, rb, rc] = (await Promise.all([a.answer, b.answer, c.answer])) as any[];
    expect([ra.id, rb.id, rc.id]).toEqual([1, 1, 'x']);
    expect(ra.result.content[0].text).toBe('https://a.example/api/v1');
    expect(rb.result.content[0].text).toBe('https://b.example/api/v1');
    expect(rc.result.content[0].text).toBe('https://c.example/api/v1');
  });

  it("answers the SDK's own errors (an unknown tool, bad arguments) under the client's id", async () => {
    const transport = new ExchangeTransport();
    await serverOn(transport);
    const unknown = (await transport.call(call(7, 'nope'), callerNamed('a')).answer) as any;
    expect(unknown.id).toBe(7);
    expect(JSON.stringify(unknown)).toMatch(/nope/);
    const bad = (await transport.call(call(8, 'whoami', { delay_ms: 'soon' }), callerNamed('a')).answer) as any;
    expect(bad.id).toBe(8);
    expect(JSON.stringify(bad)).toMatch(/delay_ms/);
  });

  it("stops a cancelled call's tool and answers nothing for it; the others go on", async () => {
    const transport = new ExchangeTransport();
    const { stopped } = await serverOn(transport);
    const held = transport.call(call(1, 'hold'), callerNamed('a'));
    const other = transport.call(call(1, 'whoami', { delay_ms: 20 }), callerNamed('b'));
    await new Promise((r) => setTimeout(r, 5));
    held.cancel();
    expect(await held.answer).toBeUndefined();
    expect(((await other.answer) as any).result.content[0].text).toBe('https://b.example/api/v1');
    await new Promise((r) => setTimeout(r, 5));
    expect(stopped).toEqual(['https://a.example/api/v1']);
  });

  it('answers nothing for the calls still open when it closes', async () => {
    const transport = new ExchangeTransport();
    const { server } = await serverOn(transport);
    const held = transport.call(call(1, 'hold'), callerNamed('a'));
    await server.close();
    expect(await held.answer).toBeUndefined();
  });
});
