// The built MCP server (libs/mcp-server/dist/main.js) driven over stdio by the official SDK client, against the real
// service (all-in-one process on a real Postgres).
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';
import { startUpstream } from '../harness/upstream.js';

const SERVER = join(resolve(import.meta.dirname, '../..'), 'libs/mcp-server/dist/main.js');

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const text = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
/** The JSON part of a tool result (after the summary line). */
const data = (r: unknown) => JSON.parse(text(r).slice(text(r).indexOf('\n') + 1));

describe('MCP server over stdio (all-in-one)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
  let mcp: Client;
  let stderr = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'mcp' });
    api = apiClient(stack.baseUrl);
    acct = await api.newAccount();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SERVER],
      env: {
        PATH: process.env.PATH ?? '',
        AGENT_AUTH_API_KEY: acct.api_key,
        AGENT_AUTH_URL: stack.baseUrl,
        AGENT_AUTH_POLL_INTERVAL_MS: '200',
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    mcp = new Client({ name: 'e2e', version: '0.0.0' });
    await mcp.connect(transport);
  });
  afterAll(async () => {
    await mcp?.close();
    await stack?.stop();
    await db?.drop();
  });

  it('lists the eight tools with input schemas and descriptions', async () => {
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
    expect((request.inputSchema.properties as Record<string, { enum?: string[] }>).action_type?.enum).toContain(
      'purchase',
    );
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(60);
      expect(t.outputSchema, t.name).toMatchObject({ type: 'object' });
    }
    expect(tools.find((t) => t.name === 'request_approval')!.outputSchema!.properties).toHaveProperty('approval_url');
    expect(stderr).toContain('ready on stdio');
  });

  it('request_approval → device approves → wait_for_approval, and check_approval reads it', async () => {
    const created = await mcp.callTool({
      name: 'request_approval',
      arguments: { action_type: 'purchase', title: 'Buy a book', amount: 12.5, recipient: 'Acme Books' },
    });
    expect(created.isError).toBeFalsy();
    expect(text(created)).toMatch(/PENDING/);
    const id = data(created).id as string;
    expect(id).toMatch(/^act_/);

    const checked = await mcp.callTool({ name: 'check_approval', arguments: { request_id: id } });
    expect(data(checked)).toMatchObject({ id, status: 'pending' });

    setTimeout(() => void api.device(acct.device_id).post(`/actions/${id}/approve`), 500);
    const waited = await mcp.callTool({
      name: 'wait_for_approval',
      arguments: { request_id: id, timeout_seconds: 20 },
    });
    expect(waited.isError).toBeFalsy();
    expect(text(waited)).toMatch(/APPROVED/);
    expect(data(waited)).toMatchObject({ id, status: 'approved', resolved_by: 'biometric' });
  });

  it('wait_for_approval reports denial, and a still-pending request when its time is up', async () => {
    const denied = data(
      await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'social', title: 'Post a tweet' } }),
    ).id;
    await api.device(acct.device_id).post(`/actions/${denied}/deny`, { reason: 'no' });
    const waited = await mcp.callTool({ name: 'wait_for_approval', arguments: { request_id: denied } });
    expect(text(waited)).toMatch(/DENIED.*reason: no/);

    const pending = data(
      await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'legal', title: 'Sign' } }),
    ).id;
    const stillPending = await mcp.callTool({
      name: 'wait_for_approval',
      arguments: { request_id: pending, timeout_seconds: 1 },
    });
    expect(stillPending.isError).toBeFalsy();
    expect(data(stillPending)).toMatchObject({ id: pending, status: 'pending' });
  });

  it('request_approval gives the device app link of the request, and every result carries structuredContent', async () => {
    const created = await mcp.callTool({
      name: 'request_approval',
      arguments: { action_type: 'purchase', title: 'Buy a pen', amount: 3 },
    });
    const structured = created.structuredContent as { id: string; status: string; approval_url: string };
    const origin = new URL(stack.baseUrl).origin;
    expect(structured).toMatchObject({
      id: data(created).id,
      status: 'pending',
      approval_url: `${origin}/app/#/requests/${data(created).id}`,
    });
    expect(text(created)).toContain(structured.approval_url);
    expect((await fetch(structured.approval_url.split('#')[0]!)).status).toBe(200); // the link opens the app
    const checked = await mcp.callTool({ name: 'check_approval', arguments: { request_id: structured.id } });
    expect(checked.structuredContent).toMatchObject({ id: structured.id, status: 'pending' });
    const history = await mcp.callTool({ name: 'get_approval_history', arguments: { limit: 1 } });
    expect(history.structuredContent).toEqual({ actions: [expect.objectContaining({ id: structured.id })] });
  });

  it('cancel_approval withdraws a pending request: the holder no longer sees it, a second cancel answers it again', async () => {
    const created = await mcp.callTool({
      name: 'request_approval',
      arguments: { action_type: 'purchase', title: 'Buy a lamp I no longer need', amount: 30 },
    });
    const id = data(created).id as string;
    const cancelled = await mcp.callTool({ name: 'cancel_approval', arguments: { request_id: id } });
    expect(cancelled.isError).toBeFalsy();
    expect(cancelled.structuredContent).toMatchObject({ id, status: 'cancelled', resolved_by: 'agent' });
    expect(text(cancelled)).toMatch(/CANCELLED/);
    const again = await mcp.callTool({ name: 'cancel_approval', arguments: { request_id: id } });
    expect(again.structuredContent).toMatchObject({ status: 'cancelled' });
    const pending = await api.device(acct.device_id).get('/pending');
    expect((pending.body.requests as Array<{ id: string }>).map((r) => r.id)).not.toContain(id);
    const unknown = await mcp.callTool({ name: 'cancel_approval', arguments: { request_id: 'act_missing' } });
    expect(unknown.isError).toBe(true);
  });

  it('wait_for_approval sends progress notifications while it waits, then answers the approval', async () => {
    const id = data(
      await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'scheduling', title: 'Book a room' } }),
    ).id as string;
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    setTimeout(() => void api.device(acct.device_id).post(`/actions/${id}/approve`), 6000);
    const waited = await mcp.callTool(
      { name: 'wait_for_approval', arguments: { request_id: id, timeout_seconds: 30 } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
        timeout: 40_000,
      },
    );
    expect(waited.structuredContent).toMatchObject({ id, status: 'approved' });
    // One at the start and one at least every 5 s: two or more in six seconds, growing.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatchObject({ total: 30, message: expect.stringContaining(id) });
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
  });

  it('get_approval_history lists with limit and status filter', async () => {
    const all = data(await mcp.callTool({ name: 'get_approval_history', arguments: { limit: 2 } }));
    expect(all).toHaveLength(2);
    const approved = data(await mcp.callTool({ name: 'get_approval_history', arguments: { status: 'approved' } }));
    expect(approved.length).toBeGreaterThan(0);
    expect(approved.every((a: { status: string }) => a.status === 'approved')).toBe(true);
  });

  it('returns service errors as tool errors with the detail, and keeps serving', async () => {
    const missing = await mcp.callTool({ name: 'check_approval', arguments: { request_id: 'act_doesnotexist' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toBe(
      "Agent auth service error 404 (NotFoundError): Action request 'act_doesnotexist' not found",
    );

    // Input the tool schema rejects never reaches the service; the SDK answers with a tool error too.
    const invalid = await mcp.callTool({
      name: 'request_approval',
      arguments: { action_type: 'teleport', title: 'x' },
    });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/action_type/);

    // The service's own validation (400) comes back as a tool error with its detail.
    const badCurrency = await mcp.callTool({
      name: 'request_approval',
      arguments: { action_type: 'purchase', title: 'x', amount: 1, currency: 'XYZ' },
    });
    expect(badCurrency.isError).toBe(true);
    expect(text(badCurrency)).toMatch(/400 \(ValidationError\): currency: is not an ISO 4217/);

    expect((await mcp.callTool({ name: 'check_approval', arguments: { request_id: 'act_x' } })).isError).toBe(true);
    expect((await mcp.listTools()).tools).toHaveLength(8);
  });

  it('get_spending_summary and list_vault_services answer with data or a tool error, never a crash', async () => {
    // These routes are being added by other changes; whichever the service serves today, the tool answers.
    for (const name of ['get_spending_summary', 'list_vault_services']) {
      const r = await mcp.callTool({ name, arguments: {} });
      if (r.isError) expect(text(r)).toMatch(/^Agent auth service error \d{3} /);
      else expect(() => data(r)).not.toThrow();
    }
  });

  it('execute_api_call creates a vault request and does not call anything when it is denied', async () => {
    const pending = mcp.callTool({
      name: 'execute_api_call',
      arguments: { service_name: 'github', method: 'GET', url: 'https://api.github.com/user', timeout_seconds: 20 },
    });
    // The device denies the vault request once it shows up in /pending.
    let id: string | undefined;
    for (let i = 0; i < 50 && !id; i++) {
      const list = await api.device(acct.device_id).get('/pending');
      id = list.body.requests.find(
        (r: { action_type: string; metadata: { vault_execute?: boolean } }) =>
          r.action_type === 'system' && r.metadata.vault_execute,
      )?.id;
      if (!id) await new Promise((r) => setTimeout(r, 100));
    }
    expect(id).toMatch(/^act_/);
    const [row] = (await api.device(acct.device_id).get('/pending')).body.requests.filter(
      (r: { id: string }) => r.id === id,
    );
    expect(row.metadata).toMatchObject({
      vault_execute: true,
      service_name: 'github',
      method: 'GET',
      url: 'https://api.github.com/user',
    });
    await api.device(acct.device_id).post(`/actions/${id}/deny`);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toMatch(/DENIED.*The API call was not made/);
  });

  it('execute_api_call runs the approved call with the credential injected and returns the upstream answer', async () => {
    const secret = 'mcp-e2e-secret-abcdef0123456789';
    const upstream = await startUpstream({
      handler: (req, res) =>
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`key=${req.headers['x-api-key']}`),
    });
    try {
      const stored = await api.device(acct.device_id).post('/vault/credentials', {
        service_name: 'mcp-api',
        credential_value: secret,
        auth_type: 'api_key',
        auth_header: 'X-Api-Key',
        allowed_hosts: ['127.0.0.1'],
      });
      expect(stored.status).toBe(200);
      const services = await mcp.callTool({ name: 'list_vault_services', arguments: {} });
      expect(services.isError).toBeFalsy();
      expect(text(services)).toContain('mcp-api');
      expect(text(services)).not.toContain(secret);

      const pending = mcp.callTool({
        name: 'execute_api_call',
        arguments: { service_name: 'mcp-api', method: 'GET', url: `${upstream.origin}/report`, timeout_seconds: 20 },
      });
      let row: { id: string; content_hash: string } | undefined;
      for (let i = 0; i < 50 && !row; i++) {
        const list = await api.device(acct.device_id).get('/pending');
        row = list.body.requests.find(
          (r: { metadata: { service_name?: string } }) => r.metadata.service_name === 'mcp-api',
        );
        if (!row) await new Promise((r) => setTimeout(r, 100));
      }
      expect(row?.content_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(
        (await api.device(acct.device_id).post(`/actions/${row!.id}/approve`, { content_hash: row!.content_hash }))
          .status,
      ).toBe(200);
      const result = await pending;
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toMatch(/Approved and executed: upstream answered 200/);
      expect(data(result).response).toMatchObject({ status_code: 200, body: 'key=[redacted]' });
      expect(upstream.seen.at(-1)!.headers['x-api-key']).toBe(secret);
      expect(text(result)).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    } finally {
      await upstream.close();
    }
  });
});
