// The built MCP gate (libs/mcp-server/dist/gate-main.js) in front of the reference MCP servers from npm
// (server-filesystem, server-everything), driven over stdio by the official SDK client, against the real service
// (all-in-one process on a real Postgres); the device approves or denies through the API.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { canonicalSha256 } from '@agent-auth/client';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';

const ROOT = resolve(import.meta.dirname, '../..');
const GATE = join(ROOT, 'libs/mcp-server/dist/gate-main.js');
const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const text = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PendingRequest {
  id: string;
  title: string;
  description: string | null;
  action_type: string;
  risk_level: string;
  metadata: Record<string, unknown>;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

interface Connected {
  client: Client;
  stderr: () => string;
}

/** An MCP client connected over stdio to `command` (the gate, or a server directly). */
async function connect(input: {
  args: string[];
  env?: Record<string, string>;
  options?: ClientOptions;
  setUp?: (client: Client) => void;
}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: input.args,
    env: { PATH: process.env.PATH ?? '', ...input.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'gate-e2e', version: '0.0.0' }, input.options);
  input.setUp?.(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe('MCP gate (all-in-one)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
  const clients: Client[] = [];

  /** The gate in front of `server`, as the agent of the test account. */
  async function gate(input: {
    gateArgs: string[];
    server: string[];
    options?: ClientOptions;
    setUp?: (c: Client) => void;
  }) {
    const connected = await connect({
      args: [GATE, ...input.gateArgs, '--', process.execPath, ...input.server],
      env: { AGENT_AUTH_API_KEY: acct.api_key, AGENT_AUTH_URL: stack.baseUrl },
      options: input.options,
      setUp: input.setUp,
    });
    clients.push(connected.client);
    return connected;
  }

  async function direct(input: { server: string[]; options?: ClientOptions; setUp?: (c: Client) => void }) {
    const connected = await connect({ args: input.server, options: input.options, setUp: input.setUp });
    clients.push(connected.client);
    return connected.client;
  }

  /** The pending request the gate created for a call of `tool`, as the device lists it. */
  const pendingFor = (tool: string) =>
    until(`a pending request for ${tool}`, async () => {
      const list = await api.device(acct.device_id).get('/pending');
      return (list.body.requests as PendingRequest[]).find((r) => r.metadata.tool_name === tool);
    });
  const agentView = async (id: string) => (await api.agent(acct.api_key).get(`/actions/${id}`)).body;
  const requestCount = async () => (await api.agent(acct.api_key).get('/actions?limit=200')).body.actions.length;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'mcp-gate' });
    api = apiClient(stack.baseUrl);
    acct = await api.newAccount();
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await stack?.stop();
    await db?.drop();
  });

  describe('in front of server-filesystem, holding writes', () => {
    let root: string;
    let fs: Connected;

    beforeAll(async () => {
      root = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-gate-')));
      writeFileSync(join(root, 'hello.txt'), 'hello from the disk\n');
      fs = await gate({ gateArgs: ['--timeout', '60'], server: [FILESYSTEM, root] });
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('serves the server as it is: its name, capabilities and tools/list with annotations and output schemas', async () => {
      const own = await direct({ server: [FILESYSTEM, root] });
      expect(fs.client.getServerVersion()).toEqual(own.getServerVersion());
      expect(fs.client.getServerVersion()?.name).toBe('secure-filesystem-server');
      expect(fs.client.getServerCapabilities()).toEqual(own.getServerCapabilities());
      expect(fs.client.getInstructions()).toEqual(own.getInstructions());
      const listed = await fs.client.listTools();
      expect(listed).toEqual(await own.listTools());
      const write = listed.tools.find((t) => t.name === 'write_file')!;
      expect(write.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(write.outputSchema).toMatchObject({ type: 'object' });
      expect(fs.stderr()).toContain('agent-auth-mcp-gate: ready on stdio');
      await own.close();
    });

    it('a read passes straight through without any request', async () => {
      const before = await requestCount();
      const read = await fs.client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'hello.txt') } });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toBe('hello from the disk\n');
      const listing = await fs.client.callTool({ name: 'list_directory', arguments: { path: root } });
      expect(text(listing)).toContain('[FILE] hello.txt');
      expect(await requestCount()).toBe(before);
      expect((await api.device(acct.device_id).get('/pending')).body.requests).toEqual([]);
    });

    it('a write waits for the device; nothing is written before it approves, then the approved arguments are', async () => {
      const path = join(root, 'approved.txt');
      const progress: Progress[] = [];
      const call = fs.client.callTool(
        { name: 'write_file', arguments: { path, content: 'written after approval' } },
        undefined,
        {
          onprogress: (p) => progress.push(p),
          timeout: 60_000,
        },
      );
      const pending = await pendingFor('write_file');
      expect(pending).toMatchObject({
        action_type: 'system',
        risk_level: 'high',
        title: `MCP secure-filesystem-server: write_file ${path}`,
        metadata: {
          source: 'mcp',
          server: 'secure-filesystem-server',
          tool_name: 'write_file',
          arguments: { path, content: 'written after approval' },
        },
      });
      expect(pending.description).toContain('may delete or overwrite data');
      await sleep(1000);
      expect(existsSync(path)).toBe(false);
      let settled = false;
      void call.finally(() => (settled = true));
      expect(settled).toBe(false);

      expect((await api.device(acct.device_id).post(`/actions/${pending.id}/approve`)).status).toBe(200);
      const result = await call;
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toMatch(/Successfully wrote/);
      expect(readFileSync(path, 'utf8')).toBe('written after approval');
      expect(await agentView(pending.id)).toMatchObject({ status: 'approved', resolved_by: 'biometric' });
      // The caller gave a progress token: it heard the gate wait, naming the request.
      expect(progress[0]).toMatchObject({ progress: 0, total: 60, message: expect.stringContaining(pending.id) });
    });

    it('a denial is a tool error carrying the reason, and nothing is written', async () => {
      const path = join(root, 'denied.txt');
      const call = fs.client.callTool({ name: 'write_file', arguments: { path, content: 'never' } }, undefined, {
        timeout: 60_000,
      });
      const pending = await pendingFor('write_file');
      await api.device(acct.device_id).post(`/actions/${pending.id}/deny`, { reason: 'not in that folder' });
      const result = await call;
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        `The call of write_file was denied: not in that folder. The tool was not run. (agent-auth request ${pending.id})`,
      );
      await sleep(300);
      expect(existsSync(path)).toBe(false);
    });

    it('arguments over the metadata limit go as digest and preview; the approved call writes all of them', async () => {
      const path = join(root, 'large.txt');
      const content = `${'a large file, line after line\n'.repeat(1000)}the end\n`;
      const call = fs.client.callTool({ name: 'write_file', arguments: { path, content } }, undefined, {
        timeout: 60_000,
      });
      const pending = await pendingFor('write_file');
      expect(pending.title).toBe(`MCP secure-filesystem-server: write_file ${path} (large arguments)`);
      expect(pending.metadata).toMatchObject({
        source: 'mcp',
        tool_name: 'write_file',
        arguments_sha256: canonicalSha256({ path, content }),
        arguments_bytes: Buffer.byteLength(JSON.stringify({ path, content })),
        arguments_truncated: true,
      });
      expect(pending.metadata).not.toHaveProperty('arguments');
      expect(JSON.stringify({ path, content }).startsWith(pending.metadata.arguments_preview as string)).toBe(true);
      expect(pending.description).toContain('too large to show in full');
      await api.device(acct.device_id).post(`/actions/${pending.id}/approve`);
      const result = await call;
      expect(result.isError, text(result)).toBeFalsy();
      expect(readFileSync(path, 'utf8')).toBe(content);
    });

    it('a held call whose arguments are not an object is refused at once, and nobody is asked', async () => {
      const before = await requestCount();
      const odd = fs.client.request(
        { method: 'tools/call', params: { name: 'write_file', arguments: ['not', 'an', 'object'] } },
        CallToolResultSchema,
      );
      await expect(odd).rejects.toThrow(/-32602.*arguments must be an object/);
      expect(await requestCount()).toBe(before);
    });

    it('a call the client cancels while it waits withdraws its request and never runs', async () => {
      const path = join(root, 'cancelled.txt');
      const controller = new AbortController();
      const call = fs.client.callTool({ name: 'write_file', arguments: { path, content: 'never' } }, undefined, {
        signal: controller.signal,
        timeout: 60_000,
      });
      const pending = await pendingFor('write_file');
      controller.abort('the user changed their mind');
      await expect(call).rejects.toThrow();
      const withdrawn = await until('the request withdrawn', async () => {
        const view = await agentView(pending.id);
        return view.status === 'pending' ? undefined : view;
      });
      expect(withdrawn).toMatchObject({ status: 'cancelled', resolved_by: 'agent' });
      expect((await api.device(acct.device_id).post(`/actions/${pending.id}/approve`)).status).toBe(409);
      await sleep(500);
      expect(existsSync(path)).toBe(false);
      expect(fs.stderr()).toContain('write_file: the call was cancelled, its request withdrawn');
    });
  });

  it('a client that disconnects while a call waits leaves no request behind: the gate withdraws it and stops', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-gate-close-')));
    try {
      const leaving = await gate({ gateArgs: [], server: [FILESYSTEM, root] });
      const path = join(root, 'left.txt');
      const call = leaving.client.callTool({ name: 'write_file', arguments: { path, content: 'never' } }, undefined, {
        timeout: 60_000,
      });
      const pending = await until('the request of the leaving client', async () => {
        const list = await api.device(acct.device_id).get('/pending');
        return (list.body.requests as PendingRequest[]).find(
          (r) => r.metadata.arguments && (r.metadata.arguments as { path?: string }).path === path,
        );
      });
      await leaving.client.close();
      await expect(call).rejects.toThrow();
      expect(await agentView(pending.id)).toMatchObject({ status: 'cancelled', resolved_by: 'agent' });
      expect(leaving.stderr()).toContain('agent-auth-mcp-gate: stopping: the client closed stdin');
      expect(existsSync(path)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  describe('in front of server-everything, holding writes', () => {
    const capabilities: ClientOptions = { capabilities: { sampling: {}, roots: { listChanged: true } } };
    const roots = [{ uri: `file://${tmpdir()}/gate-root`, name: 'gate-root' }];
    const heard = {
      listChanged: 0,
      logs: [] as unknown[],
      updated: [] as string[],
      rootsAsked: 0,
      sampled: [] as unknown[],
    };
    /** A client that answers the server's own requests, as a model host does. */
    const setUp = (client: Client) => {
      client.setRequestHandler(ListRootsRequestSchema, () => {
        heard.rootsAsked++;
        return { roots };
      });
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        heard.sampled.push(request.params);
        return { model: 'scripted', role: 'assistant', content: { type: 'text', text: 'sampled through the gate' } };
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.listChanged++);
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.logs.push(n.params));
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.updated.push(n.params.uri));
    };
    let everything: Connected;

    beforeAll(async () => {
      everything = await gate({ gateArgs: [], server: [EVERYTHING], options: capabilities, setUp });
    });

    it("tools, resources, templates, prompts and completions are the server's own", async () => {
      const own = await direct({ server: [EVERYTHING], options: capabilities, setUp: () => {} });
      // server-everything adds the tools a client's capabilities allow after it starts, and says so.
      await until('the tools a sampling client gets', async () => {
        const { tools } = await everything.client.listTools();
        return tools.some((t) => t.name === 'trigger-sampling-request') || undefined;
      });
      const ownTools = await until('the same tools from the server itself', async () => {
        const listed = await own.listTools();
        return listed.tools.some((t) => t.name === 'trigger-sampling-request') ? listed : undefined;
      });
      expect(await everything.client.listTools()).toEqual(ownTools);
      expect(everything.client.getServerCapabilities()).toEqual(own.getServerCapabilities());
      expect(await everything.client.listResources()).toEqual(await own.listResources());
      expect(await everything.client.listResourceTemplates()).toEqual(await own.listResourceTemplates());
      const uri = 'demo://resource/static/document/architecture.md';
      expect(await everything.client.readResource({ uri })).toEqual(await own.readResource({ uri }));
      expect(await everything.client.listPrompts()).toEqual(await own.listPrompts());
      const prompt = { name: 'args-prompt', arguments: { city: 'Lisbon', state: 'Lisboa' } };
      expect(await everything.client.getPrompt(prompt)).toEqual(await own.getPrompt(prompt));
      const completion = await everything.client.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'E' },
      });
      expect(completion.completion.values).toEqual(['Engineering']);
      await everything.client.ping();
      expect(heard.listChanged).toBeGreaterThan(0);
      await own.close();
    });

    it('a read-only tool runs at once, its own progress notifications passed through unchanged', async () => {
      const before = await requestCount();
      const progress: Progress[] = [];
      const result = await everything.client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      expect(text(result)).toMatch(/Long running operation completed/);
      // 1 to 3 of 4 always; the server's 4 of 4 may come after its answer, when the client no longer listens.
      expect(progress.slice(0, 3).map((p) => [p.progress, p.total])).toEqual([
        [1, 4],
        [2, 4],
        [3, 4],
      ]);
      expect(await requestCount()).toBe(before);
    });

    it('requests the server makes of the client pass through both ways: roots, and sampling once approved', async () => {
      const listed = await everything.client.callTool({ name: 'get-roots-list', arguments: {} });
      expect(heard.rootsAsked).toBeGreaterThan(0);
      expect(text(listed)).toContain(roots[0]!.uri);

      const call = everything.client.callTool(
        { name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } },
        undefined,
        { timeout: 60_000 },
      );
      const pending = await pendingFor('trigger-sampling-request');
      expect(pending).toMatchObject({
        title: 'MCP mcp-servers/everything: trigger-sampling-request prompt=say hi',
        risk_level: 'medium',
        metadata: { source: 'mcp', server: 'mcp-servers/everything', arguments: { prompt: 'say hi', maxTokens: 20 } },
      });
      expect(heard.sampled).toHaveLength(0);
      await api.device(acct.device_id).post(`/actions/${pending.id}/approve`);
      const result = await call;
      expect(text(result)).toContain('sampled through the gate');
      expect(heard.sampled).toHaveLength(1);
    });

    it('notifications pass through: log messages, and resource updates once subscribed', async () => {
      expect(heard.logs.length).toBeGreaterThan(0); // the server logs the roots it was given
      const uri = 'demo://resource/static/document/features.md';
      await everything.client.setLoggingLevel('debug');
      await everything.client.subscribeResource({ uri });
      const call = everything.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }, undefined, {
        timeout: 60_000,
      });
      await api.device(acct.device_id).post(`/actions/${(await pendingFor('toggle-subscriber-updates')).id}/approve`);
      expect((await call).isError).toBeFalsy();
      await until('a resources/updated notification', async () => heard.updated.find((u) => u === uri), 12_000);
      await everything.client.unsubscribeResource({ uri });
    });

    it('the wrapped server runs without the agent key in its environment', async () => {
      const env = JSON.parse(text(await everything.client.callTool({ name: 'get-env', arguments: {} })));
      expect(env.PATH).toBe(process.env.PATH);
      expect(env).not.toHaveProperty('AGENT_AUTH_API_KEY');
      expect(JSON.stringify(env)).not.toContain(acct.api_key);
    });
  });

  describe('in front of server-everything, holding every call for at most 10 s', () => {
    let strict: Connected;

    beforeAll(async () => {
      strict = await gate({ gateArgs: ['--ask', 'all', '--timeout', '10'], server: [EVERYTHING] });
    });

    it("holds a read-only tool too; reports its wait at least every 5 s, then the tool's own progress, always growing", async () => {
      const progress: Progress[] = [];
      const call = strict.client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
        undefined,
        { onprogress: (p) => progress.push(p), timeout: 60_000 },
      );
      const pending = await pendingFor('trigger-long-running-operation');
      expect(pending).toMatchObject({ action_type: 'data_access', risk_level: 'medium' });
      await until('two progress notifications of the wait', async () => (progress.length >= 2 ? true : undefined));
      await api.device(acct.device_id).post(`/actions/${pending.id}/approve`);
      expect(text(await call)).toMatch(/Long running operation completed/);
      expect(progress[0]).toMatchObject({ progress: 0, total: 10, message: expect.stringContaining(pending.id) });
      expect(progress[1]!.progress).toBeLessThanOrEqual(5);
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
      // The server's own progress (1 of 2, perhaps 2 of 2) follows the wait's, shifted past its last value.
      const waiting = (p: Progress) => p.message?.startsWith('Waiting for the holder') === true;
      const lastWait = progress.filter(waiting).at(-1)!.progress;
      const own = progress.filter((p) => !waiting(p));
      expect(own[0]).toMatchObject({ progress: lastWait + 2, total: lastWait + 3 });
      expect(strict.stderr()).not.toMatch(/could not|unhandled/);
    });

    it('a call nobody answers is refused after the time-out, and its request withdrawn', async () => {
      const started = Date.now();
      const call = strict.client.callTool({ name: 'echo', arguments: { message: 'anyone?' } }, undefined, {
        timeout: 60_000,
      });
      const pending = await pendingFor('echo');
      const result = await call;
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        `Nobody approved the call of echo within 10 s, so the tool was not run. (agent-auth request ${pending.id})`,
      );
      expect(await agentView(pending.id)).toMatchObject({ status: 'cancelled', resolved_by: 'agent' });
    });
  });
});
