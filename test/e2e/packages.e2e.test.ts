// The two publishable packages as a user outside this repository gets them: `npm pack` of each, installed from the
// tarballs into an empty folder, then run there against a real service. The npm registry is needed only for their
// third-party dependencies (the local npm cache serves them when it has them).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';

const run = promisify(execFile);
const LIBS = resolve(import.meta.dirname, '../../libs');

const CHECK = `
import { AgentAuthClient, UnauthorizedError } from '@agent-auth/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [apiKey, baseUrl] = process.argv.slice(2);
const client = new AgentAuthClient({ apiKey, baseUrl });
const created = await client.requestAction({ action_type: 'purchase', title: 'Packed client', amount: 3 });
const read = await client.getStatus(created.id);
let unauthorized = false;
await new AgentAuthClient({ apiKey: 'aa_wrong', baseUrl }).getStatus(created.id).catch((e) => (unauthorized = e instanceof UnauthorizedError));

const transport = new StdioClientTransport({
  command: 'npx', args: ['--no-install', 'agent-auth-mcp-server'],
  env: { PATH: process.env.PATH, AGENT_AUTH_API_KEY: apiKey, AGENT_AUTH_URL: baseUrl }, stderr: 'pipe',
});
const mcp = new Client({ name: 'pack-check', version: '0' });
await mcp.connect(transport);
const tools = (await mcp.listTools()).tools.map((t) => t.name);
const asked = await mcp.callTool({ name: 'request_approval', arguments: { action_type: 'purchase', title: 'Packed MCP server', amount: 4 } });
await mcp.close();
process.stdout.write(JSON.stringify({ created: created.id, status: read.status, unauthorized, tools, asked: asked.content[0].text, askedError: asked.isError ?? false }));
`;

describe('npm pack of @agent-auth/client and @agent-auth/mcp-server installs and runs in a fresh folder', () => {
  let dir: string;
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let install: { stdout: string; stderr: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aa-pack-'));
    db = await createTestDatabase();
    const started = startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'packages' });
    // npm pack runs each package's prepack (tsc -b) and prints the tarball's file name last.
    const tarballs: string[] = [];
    for (const pkg of ['client', 'mcp-server']) {
      const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: join(LIBS, pkg) });
      tarballs.push(join(dir, stdout.trim().split('\n').pop()!));
    }
    writeFileSync(join(dir, 'package.json'), '{"name":"pack-check","private":true,"type":"module"}');
    install = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn', ...tarballs],
      { cwd: dir },
    );
    writeFileSync(join(dir, 'check.mjs'), CHECK);
    stack = await started;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs without an engine warning on this Node.js', () => {
    expect(install.stderr).not.toMatch(/EBADENGINE/);
  });

  it('the packed client and the packed MCP server (its bin) work against the service', async () => {
    const account = await apiClient(stack.baseUrl).newAccount();
    const { stdout } = await run(process.execPath, ['check.mjs', account.api_key, stack.baseUrl], {
      cwd: dir,
      timeout: 60_000,
    });
    const result = JSON.parse(stdout) as {
      created: string;
      status: string;
      unauthorized: boolean;
      tools: string[];
      asked: string;
      askedError: boolean;
    };
    expect(result.created).toMatch(/^act_/);
    expect(result.status).toBe('pending');
    expect(result.unauthorized).toBe(true);
    expect(result.tools).toEqual(
      expect.arrayContaining(['request_approval', 'check_approval', 'wait_for_approval', 'execute_api_call']),
    );
    expect(result.askedError).toBe(false);
    expect(result.asked).toMatch(/act_/);
    // Both requests reached the service as the agent's own.
    const mine = await apiClient(stack.baseUrl).agent(account.api_key).get('/actions');
    expect(mine.body.actions.map((a: { title: string }) => a.title).sort()).toEqual([
      'Packed MCP server',
      'Packed client',
    ]);
  }, 90_000);
});
