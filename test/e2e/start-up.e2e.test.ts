import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { duplicateKeys, linesOf } from '../harness/log-lines.js';
import { SERVICE_NODE_FLAGS } from '../harness/stack.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { natsUrl } = inject('infra');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a service's built entry point with exactly `env` (plus PATH) and its output piped (no terminal). */
function run(
  entry: string,
  env: Record<string, string>,
  until?: (stdout: string, stderr: string) => boolean,
): Promise<Run> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let stopping = false;
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${entry} did not finish in 40 s:\n${stdout}\n${stderr}`));
    }, 40_000);
    const check = () => {
      if (!stopping && until?.(stdout, stderr)) {
        stopping = true; // once: a second signal means "exit now"; after a moment, so its signal handler is installed
        setTimeout(() => child.kill('SIGTERM'), 500);
      }
    };
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      check();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      check();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe('start-up errors are one clear line naming the variable', () => {
  const cases: Array<[string, string, Record<string, string>, RegExp]> = [
    [
      'actions without ACTIONS_KEYS',
      'services/actions/dist/main.js',
      { DATABASE_URL: 'postgres://127.0.0.1:1/x', NATS_URL: 'nats://127.0.0.1:1' },
      /^actions: cannot start: ACTIONS_KEYS must be set: .+$/,
    ],
    [
      'actions with a malformed ACTIONS_KEYS',
      'services/actions/dist/main.js',
      { ACTIONS_KEYS: 'k1:short' },
      /^actions: cannot start: ACTIONS_KEYS is not valid: .*32 bytes.*$/,
    ],
    [
      'the vault executor without VAULT_KEYS',
      'services/vault-executor/dist/main.js',
      {},
      /^vault-executor: cannot start: VAULT_KEYS must be set: .+$/,
    ],
    [
      'the gateway without NATS_URL',
      'services/gateway/dist/main.js',
      { RATE_LIMITS: 'false' },
      /^gateway: cannot start: NATS_URL must be set: .+$/,
    ],
    [
      'the gateway with PORT=abc',
      'services/gateway/dist/main.js',
      { PORT: 'abc' },
      /^gateway: cannot start: Invalid configuration: PORT: .+$/,
    ],
    [
      'the policy service with METRICS_PORT=-1',
      'services/policy/dist/main.js',
      { METRICS_PORT: '-1' },
      /^policy: cannot start: Invalid configuration: METRICS_PORT: .+$/,
    ],
  ];
  for (const [name, entry, env, expected] of cases) {
    it(name, async () => {
      const result = await run(entry, env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(expected);
    });
  }
});

describe('all-in-one first start: the banner and the demo account stay off the JSON log stream', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let result: Run;
  let dataDir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'aa-start-'));
    const env = {
      DATABASE_URL: db.url,
      // A pool of one on the embedded Postgres of the tests' fallback (vitest.config.ts).
      DB_POOL_SIZE: process.env.TEST_DB_POOL_SIZE ?? '4',
      DATA_DIR: dataDir,
      PORT: '0',
      BUS_PREFIX: `s${Date.now().toString(36)}`,
      LOG_LEVEL: 'info',
    };
    result = await run(
      'services/all-in-one/dist/main.js',
      env,
      (_out, err) => err.includes('Demo account') && err.trimEnd().endsWith('0600)'),
    );
  }, 60_000);
  afterAll(async () => db?.drop());

  it('stdout has JSON log lines only, no key repeated; the banner is on stderr', () => {
    expect(result.code).toBe(0); // stopped by SIGTERM, shut down cleanly
    const lines = linesOf(result.stdout);
    expect(lines.some((l) => l.includes('"all-in-one ready"'))).toBe(true);
    for (const line of lines) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(duplicateKeys(line), line).toEqual([]);
    }
    expect(result.stdout).not.toContain('Agent action authorization service is up');
    expect(result.stderr).toContain('Agent action authorization service is up');
    expect(result.stderr).toMatch(/API reference: http:\/\/127\.0\.0\.1:\d+\/docs/);
  });

  it("the demo account's device id and API key are in the 0600 file only, never printed without a terminal", () => {
    const file = join(dataDir, 'demo-account.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const account = JSON.parse(readFileSync(file, 'utf8')) as {
      api_key: string;
      device_id: string;
      webhook_secret: string;
    };
    expect(account.api_key).toMatch(/^aa_/);
    for (const secret of [account.api_key, account.device_id, account.webhook_secret]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
    expect(result.stderr).toContain(file);
  });
});

describe.skipIf(!natsUrl)('a service on a METRICS_PORT in use', () => {
  it('stops with one line naming METRICS_PORT', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const db = await createTestDatabase();
    try {
      const result = await run('services/policy/dist/main.js', {
        DATABASE_URL: db.url,
        NATS_URL: natsUrl!,
        METRICS_PORT: String(port),
        BUS_PREFIX: `m${Date.now().toString(36)}`,
      });
      expect(result.code).toBe(1);
      expect(linesOf(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(
        new RegExp(`^policy: cannot start: METRICS_PORT ${port} on 127\\.0\\.0\\.1 cannot be used \\(EADDRINUSE\\)`),
      );
    } finally {
      server.close();
      await db.drop();
    }
  });
});
