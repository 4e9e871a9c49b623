// The MCP conformance suite (@modelcontextprotocol/conformance) against a real all-in-one stack: its server
// scenarios against /mcp with an agent API key (the runner cannot send credentials, so a loopback proxy adds the
// key), at the newest protocol version the SDK serves; and its authorization server scenarios against the OAuth
// endpoints, the test playing the browser and the holder who allows on the device. Scenarios that call the
// reference test server's own demo tools are listed in test/fixtures/mcp-conformance/expected-failures.yml with the
// reason. Skipped when the suite is not installed (MCP_CONFORMANCE_DIR may name a folder whose node_modules holds it).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCredentialedProxy } from '../harness/credentialed-proxy.js';
import { apiClient } from '../harness/http.js';
import { consent, consentRequestOf } from '../harness/oauth-client.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';
import { freePort } from '../harness/free-port.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = ['node_modules/@modelcontextprotocol/conformance/dist/index.js']
  .flatMap((path) => [
    join(ROOT, path),
    ...(process.env.MCP_CONFORMANCE_DIR ? [join(process.env.MCP_CONFORMANCE_DIR, path)] : []),
  ])
  .find((path) => existsSync(path));
const EXPECTED = join(ROOT, 'test/fixtures/mcp-conformance/expected-failures.yml');

/** One scenario's outcome from the runner's results folder. */
interface ScenarioResult {
  scenario: string;
  failed: string[];
}

/** The runner's CLI under Node 20 (test/infra/conformance-node20.mjs gives it what it needs of Node 22). */
const runnerArgs = (args: string[]) => ['--import', join(ROOT, 'test/infra/conformance-node20.mjs'), CLI!, ...args];

function resultsOf(dir: string): ScenarioResult[] {
  const files = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('checks.json'));
  return files.map((file) => {
    const checks = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Array<{ id: string; status: string }>;
    return {
      scenario: file
        .split('/')
        .at(-2)!
        .replace(/^(server|authorization-server)-/, '')
        .replace(/-\d{4}-.*$/, ''),
      failed: checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => c.id),
    };
  });
}

describe.skipIf(!CLI)(
  `MCP conformance, server scenarios${CLI ? '' : ' (skipped: @modelcontextprotocol/conformance is not installed)'}`,
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let proxy: Awaited<ReturnType<typeof startCredentialedProxy>>;

    beforeAll(async () => {
      db = await createTestDatabase();
      // As deployed behind a load balancer: its address is the public one (PUBLIC_BASE_URL), so another Host is refused.
      const apiKey = { value: '' };
      proxy = await startCredentialedProxy(() => `Bearer ${apiKey.value}`);
      stack = await startStack({
        mode: 'all-in-one',
        databaseUrl: db.url,
        name: 'mcp-conformance',
        env: { PUBLIC_BASE_URL: `${proxy.origin}/api/v1` },
      });
      proxy.forwardTo(new URL(stack.baseUrl).origin);
      apiKey.value = (await apiClient(stack.baseUrl).newAccount()).api_key;
    });
    afterAll(async () => {
      await proxy?.close();
      await stack?.stop();
      await db?.drop();
    });

    it('passes every scenario but those that need the reference server’s own tools', async () => {
      const output = mkdtempSync(join(tmpdir(), 'aa-conformance-'));
      const run = await new Promise<{ code: number; stdout: string }>((done) =>
        execFile(
          process.execPath,
          runnerArgs([
            'server',
            '--url',
            `${proxy.origin}/mcp`,
            '--spec-version',
            LATEST_PROTOCOL_VERSION,
            '--expected-failures',
            EXPECTED,
            '-o',
            output,
          ]),
          { cwd: ROOT, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
          (err, stdout, stderr) =>
            done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: stdout + stderr }),
        ),
      );
      const results = resultsOf(output);
      const failed = results.filter((r) => r.failed.length > 0);
      process.stdout.write(
        `conformance: ${results.length} scenarios, ${results.length - failed.length} passed, ${failed.length} failed: ` +
          `${failed.map((r) => `${r.scenario} (${r.failed.join(', ')})`).join('; ') || 'none'}\n`,
      );
      expect(results.length).toBeGreaterThan(10);
      expect(run.code, run.stdout.slice(-4000)).toBe(0);
    }, 300_000);
  },
);

describe.skipIf(!CLI)(
  `MCP conformance, authorization server scenarios${CLI ? '' : ' (skipped: @modelcontextprotocol/conformance is not installed)'}`,
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'mcp-conformance-auth' });
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('passes the metadata and the authorization code grant, the holder allowing on the device', async () => {
      const api = apiClient(stack.baseUrl);
      const holder = await api.newAccount();
      const origin = new URL(stack.baseUrl).origin;
      const port = await freePort();
      const registered = await fetch(`${origin}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'MCP conformance',
          redirect_uris: [`http://127.0.0.1:${port}/callback`],
          token_endpoint_auth_method: 'none',
        }),
      });
      const { client_id } = (await registered.json()) as { client_id: string };
      const output = mkdtempSync(join(tmpdir(), 'aa-conformance-auth-'));
      const args = ['authorization', '--url', origin, '--client-id', client_id, '--port', String(port)];
      const runner = spawn(process.execPath, runnerArgs([...args, '--resource', `${origin}/mcp`, '-o', output]), {
        cwd: ROOT,
      });
      let printed = '';
      const allowed: Promise<number>[] = [];
      runner.stderr.on('data', (chunk) => {
        printed += chunk;
      });
      runner.stdout.on('data', (chunk) => {
        printed += chunk;
        // The runner prints the URL a person would open; the test opens it, allows as the holder, and follows the
        // redirect to the runner's callback, which then exchanges the code.
        const url = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(String(chunk))?.[1];
        if (!url) return;
        allowed.push(
          (async () => {
            const request = await consentRequestOf(new URL(url));
            const answer = await consent(
              { baseUrl: stack.baseUrl, deviceId: holder.device_id },
              { request, allow: true, agent_id: holder.agent_id },
            );
            return (await fetch(answer.body.redirect_to)).status;
          })(),
        );
      });
      const code = await new Promise<number | null>((resolve) => runner.on('exit', resolve));
      expect(await Promise.all(allowed)).toEqual([200]);
      const results = resultsOf(output);
      process.stdout.write(
        `conformance (authorization): ${results.length} scenarios, ` +
          `${results.filter((r) => r.failed.length === 0).length} passed\n`,
      );
      expect(results.map((r) => r.scenario).sort()).toEqual([
        'authorization-code-grant',
        'authorization-server-metadata-endpoint',
      ]);
      expect(results.flatMap((r) => r.failed)).toEqual([]);
      expect(code, printed.slice(-4000)).toBe(0);
    }, 120_000);
  },
);
