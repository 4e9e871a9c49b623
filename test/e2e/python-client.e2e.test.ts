// The Python client (clients/python) against the real service: starts the all-in-one process and runs the package's
// unittest suite with that service's address and a fresh account. The stack's free-plan quota and agent rate limit
// are small, with a two-second window, so the suite meets a real 402 and a real 429 (and its Retry-After) quickly;
// every other account of the suite is moved to the unlimited plan. Skipped, with the reason, without Python 3.9+.
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PYTHON = process.env.PYTHON ?? 'python3';

/** Why the suite cannot run here, or null when a Python 3.9 or later is on the PATH. */
function pythonMissing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `${PYTHON} is not installed`;
  const [major, minor] = probe.stdout.trim().split('.').map(Number) as [number, number];
  return major > 3 || (major === 3 && minor >= 9) ? null : `${PYTHON} is ${probe.stdout.trim()}; the client needs 3.9+`;
}

/** Runs the unittest suite; resolves with its exit code and everything it wrote. */
function runSuite(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, ['-m', 'unittest', 'discover', '-v', 'clients/python/tests'], {
      cwd: ROOT,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

const missing = pythonMissing();

describe.skipIf(missing)(`Python client end to end (all-in-one)${missing ? `; skipped: ${missing}` : ''}`, () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({
      mode: 'all-in-one',
      databaseUrl: db.url,
      name: 'python-client',
      env: { FREE_PLAN_MONTHLY_ACTIONS: '3', RATE_LIMIT_AGENT: '30', RATE_LIMIT_WINDOW_SECONDS: '2' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('passes the unittest suite against the real service', { timeout: 300_000 }, async () => {
    const api = apiClient(stack.baseUrl);
    const account = await api.newAccount();
    expect((await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' })).status).toBe(200);
    const { code, output } = await runSuite({
      AGENT_AUTH_BASE_URL: stack.baseUrl,
      AGENT_AUTH_API_KEY: account.api_key,
      AGENT_AUTH_DEVICE_ID: account.device_id,
    });
    console.log(output);
    expect(code, output).toBe(0);
    const ran = Number(/^Ran (\d+) tests? in /m.exec(output)?.[1] ?? 0);
    expect(ran).toBeGreaterThanOrEqual(50);
    // Only the receipt tests may skip (no `cryptography` on this Python), never for want of a service.
    const skips = [...output.matchAll(/\.\.\. skipped '([^']*)'/g)].map((m) => m[1]);
    expect(skips.filter((reason) => !/cryptography/.test(reason ?? ''))).toEqual([]);
  });
});
