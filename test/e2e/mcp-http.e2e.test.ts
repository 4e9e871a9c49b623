// The gateway's /mcp (Streamable HTTP) driven by the official SDK client with an agent API key as its bearer token,
// against a real stack: all-in-one, and one process per service over NATS with the MCP client on a second gateway
// while the holder decides through the first.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { startUpstream } from '../harness/upstream.js';
import { createTestDatabase } from '../infra/database.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: any };
const text = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const data = (r: unknown) => JSON.parse(text(r).slice(text(r).indexOf('\n') + 1));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An SDK client connected to `<origin>/mcp` with the API key as its bearer token. */
async function connect(origin: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: 'e2e-http', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  await client.connect(transport);
  return client;
}

/** A raw POST to /mcp, as a client that is not the SDK would send it. */
function post(origin: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

/** The gateway's access lines of held reads (GET /actions/{id}?wait=) of one request id. */
function heldReads(stack: Stack, id: string): Array<{ ms: number; status: number }> {
  return stack
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"request"') && line.includes(`/actions/${id}?wait=`))
    .map((line) => JSON.parse(line) as { ms: number; status: number });
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`MCP over Streamable HTTP at /mcp (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    /** Where the holder decides (the first gateway). */
    let holderOrigin: string;
    /** Where the MCP client connects: a second gateway process in processes mode. */
    let agentOrigin: string;
    let mcp: Client;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'mcp-http' });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      holderOrigin = new URL(stack.baseUrl).origin;
      agentOrigin = mode === 'processes' ? new URL(await stack.addGateway()).origin : holderOrigin;
      mcp = await connect(agentOrigin, acct.api_key);
    }, 180_000);
    afterAll(async () => {
      await mcp?.close();
      await stack?.stop();
      await db?.drop();
    });

    it('lists the eight tools of the stdio server, with their schemas', async () => {
      const { tools } = await mcp.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'cancel_approval',
        'check_approval',
        'execute_api_call',
        'get_approval_history',
        'get_spending_summary',
        'list_vault_services',
        'request_approval',
        'wait_for_approval',
      ]);
      const request = tools.find((t) => t.name === 'request_approval')!;
      expect(request.inputSchema.required).toEqual(['action_type', 'title']);
      for (const t of tools) expect(t.outputSchema, t.name).toMatchObject({ type: 'object' });
      expect(mcp.getServerVersion()).toMatchObject({ name: 'agent-auth' });
    });

    it('request_approval, then wait_for_approval with progress answers the approval given through the other gateway', async () => {
      const created = await mcp.callTool({
        name: 'request_approval',
        arguments: { action_type: 'purchase', title: 'Buy a book', amount: 12.5, recipient: 'Acme Books' },
      });
      expect(created.isError).toBeFalsy();
      const id = data(created).id as string;
      expect(created.structuredContent).toMatchObject({
        id,
        status: 'pending',
        approval_url: `${agentOrigin}/app/#/requests/${id}`,
      });
      const progress: Array<{ progress: number; total?: number }> = [];
      setTimeout(() => void api.device(acct.device_id).post(`/actions/${id}/approve`), 5000);
      const waited = await mcp.callTool(
        { name: 'wait_for_approval', arguments: { request_id: id, timeout_seconds: 30 } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 40_000 },
      );
      expect(waited.isError).toBeFalsy();
      expect(text(waited)).toMatch(/APPROVED/);
      expect(waited.structuredContent).toMatchObject({ id, status: 'approved', resolved_by: 'biometric' });
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress[0]).toMatchObject({ total: 30 });
      // Answered from the held wait, not a poll: a single held read, ended by the decision.
      for (let i = 0; i < 50 && heldReads(stack, id).length === 0; i++) await sleep(100);
      const reads = heldReads(stack, id);
      expect(reads).toHaveLength(1);
      expect(reads[0]!.ms).toBeLessThan(10_000);
    });

    it('check_approval, cancel_approval, get_approval_history and the summaries answer as the stdio server does', async () => {
      const id = data(
        await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'social', title: 'Post a photo' } }),
      ).id as string;
      const checked = await mcp.callTool({ name: 'check_approval', arguments: { request_id: id } });
      expect(checked.structuredContent).toMatchObject({ id, status: 'pending' });
      const cancelled = await mcp.callTool({ name: 'cancel_approval', arguments: { request_id: id } });
      expect(cancelled.structuredContent).toMatchObject({ id, status: 'cancelled', resolved_by: 'agent' });
      expect(text(cancelled)).toMatch(/CANCELLED/);
      const history = await mcp.callTool({ name: 'get_approval_history', arguments: { limit: 1 } });
      expect(history.structuredContent).toEqual({ actions: [expect.objectContaining({ id, status: 'cancelled' })] });
      const spending = await mcp.callTool({ name: 'get_spending_summary', arguments: {} });
      expect(spending.structuredContent).toMatchObject({ summaries: [] });
      const vault = await mcp.callTool({ name: 'list_vault_services', arguments: {} });
      expect(vault.structuredContent).toEqual({ services: [] });
      const missing = await mcp.callTool({ name: 'check_approval', arguments: { request_id: 'act_doesnotexist' } });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toBe(
        "Agent auth service error 404 (NotFoundError): Action request 'act_doesnotexist' not found",
      );
      const badCurrency = await mcp.callTool({
        name: 'request_approval',
        arguments: { action_type: 'purchase', title: 'x', amount: 1, currency: 'XYZ' },
      });
      expect(text(badCurrency)).toMatch(/400 \(ValidationError\): currency: is not an ISO 4217/);
    });

    it('answers callers at once under their own ids, each as its own agent, however their ids collide', async () => {
      const other = await api.newAccount();
      const call = (title: string) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'request_approval', arguments: { action_type: 'data_access', title } },
        });
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const apiKey = i % 2 ? other.api_key : acct.api_key;
          const headers = { authorization: `Bearer ${apiKey}`, 'mcp-protocol-version': '2025-06-18' };
          const res = await post(agentOrigin, call(`call ${i}`), headers);
          return { i, status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
        }),
      );
      for (const { i, status, type, body } of answers) {
        expect({ i, status, type, id: body.id }).toEqual({ i, status: 200, type: 'application/json', id: 1 });
        expect(body.result.structuredContent).toMatchObject({
          title: `call ${i}`,
          agent_id: i % 2 ? other.agent_id : acct.agent_id,
          approval_url: expect.stringContaining(`/app/#/requests/${body.result.structuredContent.id}`),
        });
      }
    });

    it('execute_api_call runs the approved call with the vault credential injected', async () => {
      const secret = 'mcp-http-secret-0123456789abcdef';
      const upstream = await startUpstream({
        handler: (req, res) =>
          res.writeHead(200, { 'content-type': 'text/plain' }).end(`key=${req.headers['x-api-key']}`),
      });
      try {
        const device = api.device(acct.device_id);
        const stored = await device.post('/vault/credentials', {
          service_name: 'books',
          credential_value: secret,
          auth_type: 'api_key',
          auth_header: 'X-Api-Key',
          allowed_hosts: ['127.0.0.1'],
        });
        expect(stored.status).toBe(200);
        const call = mcp.callTool(
          {
            name: 'execute_api_call',
            arguments: { service_name: 'books', method: 'GET', url: `${upstream.origin}/shelf`, timeout_seconds: 20 },
          },
          undefined,
          { timeout: 30_000 },
        );
        let item: { id: string; content_hash: string } | undefined;
        for (let i = 0; i < 50 && !item; i++) {
          const list = await device.get('/pending');
          item = list.body.requests.find(
            (r: { metadata: { service_name?: string } }) => r.metadata.service_name === 'books',
          );
          if (!item) await sleep(100);
        }
        await device.post(`/actions/${item!.id}/approve`, { content_hash: item!.content_hash });
        const result = await call;
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({
          request_id: item!.id,
          executed: true,
          response: { status_code: 200, body: 'key=[redacted]' },
        });
        // The upstream saw the secret; the tool result shows it redacted, never the value.
        expect(upstream.seen.at(-1)!.headers['x-api-key']).toBe(secret);
        expect(text(result)).not.toContain(secret);
      } finally {
        await upstream.close();
      }
    });

    it('a cancelled wait stops at once, whichever gateway hears the cancellation', async () => {
      const id = data(
        await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'legal', title: 'Sign a lease' } }),
      ).id as string;
      const abort = new AbortController();
      const waiting = mcp
        .callTool({ name: 'wait_for_approval', arguments: { request_id: id, timeout_seconds: 45 } }, undefined, {
          signal: abort.signal,
          timeout: 60_000,
        })
        .catch((err: Error) => err);
      await sleep(1500);
      // The SDK client sends notifications/cancelled to the gateway it is connected to.
      abort.abort('the agent moved on');
      expect(await waiting).toBeInstanceOf(Error);
      // The held read behind the wait ends within moments, not after 45 s.
      for (let i = 0; i < 50 && heldReads(stack, id).length === 0; i++) await sleep(100);
      expect(heldReads(stack, id)).toHaveLength(1);
      expect(heldReads(stack, id)[0]!.ms).toBeLessThan(10_000);

      // A cancellation that reaches the other gateway (another POST of a stateless client) stops it too.
      const second = data(
        await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'legal', title: 'Sign a deed' } }),
      ).id as string;
      const raw = post(
        agentOrigin,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'wait-1',
          method: 'tools/call',
          params: { name: 'wait_for_approval', arguments: { request_id: second, timeout_seconds: 45 } },
        }),
        { authorization: `Bearer ${acct.api_key}`, 'mcp-protocol-version': '2025-06-18' },
      );
      const started = Date.now();
      const answered = raw.then((r) => r.text());
      await sleep(1500);
      const cancel = await post(
        holderOrigin,
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'wait-1' } }),
        { authorization: `Bearer ${acct.api_key}`, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(cancel.status).toBe(202);
      await answered;
      expect(Date.now() - started).toBeLessThan(10_000);
      for (let i = 0; i < 50 && heldReads(stack, second).length === 0; i++) await sleep(100);
      expect(heldReads(stack, second)[0]!.ms).toBeLessThan(10_000);
    });

    it('a wait whose HTTP connection closes stops too', async () => {
      const id = data(
        await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'legal', title: 'Sign a will' } }),
      ).id as string;
      const gone = new AbortController();
      const raw = fetch(`${agentOrigin}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${acct.api_key}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'wait_for_approval', arguments: { request_id: id, timeout_seconds: 45 } },
        }),
        signal: gone.signal,
      });
      const response = await raw;
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      await sleep(1000);
      gone.abort();
      for (let i = 0; i < 50 && heldReads(stack, id).length === 0; i++) await sleep(100);
      expect(heldReads(stack, id)).toHaveLength(1);
      expect(heldReads(stack, id)[0]!.ms).toBeLessThan(10_000);
    });

    it('refuses a missing or unknown key with 401 naming the resource metadata', async () => {
      const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const missing = await post(agentOrigin, call);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${agentOrigin}/.well-known/oauth-protected-resource/mcp"`,
      );
      const unknown = await post(agentOrigin, call, { authorization: 'Bearer aa_0000_not-a-key' });
      expect(unknown.status).toBe(401);
      expect(unknown.headers.get('www-authenticate')).toMatch(
        /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/,
      );
      expect(await unknown.json()).toMatchObject({ code: 'api_key_invalid' });
    });

    it('answers malformed messages with JSON-RPC errors, never a 5xx', async () => {
      const auth = { authorization: `Bearer ${acct.api_key}` };
      const notJson = await post(agentOrigin, '{"jsonrpc": "2.0", "id": 1, "method": ', auth);
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
      for (const body of ['{"hello": "world"}', '[]', '42', '{"jsonrpc": "2.0", "id": {}, "method": 5}']) {
        const refused = await post(agentOrigin, body, auth);
        expect(refused.status, body).toBeLessThan(500);
        expect(await refused.json(), body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
      }
      const unknownMethod = await post(agentOrigin, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'no/such' }), {
        ...auth,
        'mcp-protocol-version': '2025-06-18',
      });
      expect(unknownMethod.status).toBe(200);
      expect(await unknownMethod.json()).toMatchObject({ id: 3, error: { code: -32601 } });
      const get = await fetch(`${agentOrigin}/mcp`, { headers: { ...auth, accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
    });
  });
}
