// The MCP conformance suite (@modelcontextprotocol/conformance, its server scenarios) against /mcp of a real
// all-in-one stack, with an agent API key. The runner cannot send credentials, so a loopback proxy adds the key.
// Scenarios that call the reference test server's own demo tools are listed in
// test/fixtures/mcp-conformance/expected-failures.yml with the reason. Skipped when the suite is not installed
// (MCP_CONFORMANCE_DIR may name a folder whose node_modules holds it).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCredentialedProxy } from '../harness/credentialed-proxy.js';
import { apiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';

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
        .replace(/^server-/, '')
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
          [
            '--import',
            join(ROOT, 'test/infra/conformance-node20.mjs'),
            CLI!,
            'server',
            '--url',
            `${proxy.origin}/mcp`,
            '--expected-failures',
            EXPECTED,
            '-o',
            output,
          ],
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
