import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

/** Claude Code's hook input for one tool call, as its hooks reference documents it. */
function claudeCodeInput(
  event: 'PreToolUse' | 'PermissionRequest',
  tool_name: string,
  tool_input: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    session_id: 'sess-1f2e3d',
    transcript_path: '/home/dev/.claude/projects/demo/sess-1f2e3d.jsonl',
    cwd: '/home/dev/demo',
    permission_mode: 'default',
    hook_event_name: event,
    tool_name,
    tool_input,
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
    ...extra,
  };
}

const fixtures = new URL('../fixtures/hooks/', import.meta.url);
/** A hook input exactly as the client sent it (test/fixtures/hooks, captured from the real CLIs). */
const fixture = (client: string, name: string) =>
  JSON.parse(readFileSync(new URL(`${client}/${name}`, fixtures), 'utf8')) as Record<string, any>;

/** Runs a command with `stdin` as its input; its exit code and output. */
function run(command: string, args: string[], stdin: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `probe` returns something, or fails after `ms`. */
async function eventually<T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`coding-agent hooks and cancel (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let baseUrl: string;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'hooks' });
      baseUrl = stack.baseUrl;
      api = apiClient(baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    /** A hook call as the client makes it: POST with the agent key, the answer awaited. */
    const hook = (apiKey: string, client: string, body: unknown, query = '', signal?: AbortSignal) =>
      fetch(`${baseUrl}/hooks/${client}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(body),
        signal,
      }).then(async (r) => {
        const text = await r.text();
        return { status: r.status, body: (text ? JSON.parse(text) : null) as any };
      });

    /** The holder's pending list entry of the hook's request, once it is there. */
    const pendingOf = (deviceId: string, title: string) =>
      eventually(async () => {
        const list = await api.device(deviceId).get('/pending');
        return (list.body.requests as any[]).find((r) => r.title === title);
      });

    it('asks the holder for a Bash call and answers Claude Code allow once the device approves', async () => {
      const acct = await api.newAccount();
      const input = claudeCodeInput('PreToolUse', 'Bash', { command: 'npm test', description: 'Run the tests' });
      const answer = hook(acct.api_key, 'claude-code', input);
      const item = await pendingOf(acct.device_id, 'Run: npm test');
      expect(item).toMatchObject({
        action_type: 'system',
        risk_level: 'medium',
        description: 'Claude Code in /home/dev/demo',
        metadata: {
          source: 'claude-code',
          tool_name: 'Bash',
          session_id: 'sess-1f2e3d',
          cwd: '/home/dev/demo',
          hook_event_name: 'PreToolUse',
          tool_input: { command: 'npm test', description: 'Run the tests' },
        },
      });
      expect(item.content_hash).toMatch(/^[0-9a-f]{64}$/);
      // The hash binds the tool input: approving without it is refused.
      expect((await api.device(acct.device_id).post(`/actions/${item.id}/approve`, {})).status).toBe(403);
      const approved = await api
        .device(acct.device_id)
        .post(`/actions/${item.id}/approve`, { content_hash: item.content_hash });
      expect(approved.status).toBe(200);
      const reply = await answer;
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'allow',
          permissionDecisionReason: 'Approved by the holder (biometric)',
        },
      });
    });

    it("denies with the holder's reason as the model's message (PreToolUse and PermissionRequest)", async () => {
      const acct = await api.newAccount();
      const pre = hook(acct.api_key, 'claude-code', claudeCodeInput('PreToolUse', 'Bash', { command: 'rm -rf dist' }));
      const item = await pendingOf(acct.device_id, 'Run: rm -rf dist');
      expect(item.risk_level).toBe('high');
      await api.device(acct.device_id).post(`/actions/${item.id}/deny`, { reason: 'use npm run clean instead' });
      expect((await pre).body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'Denied by the holder: use npm run clean instead',
        },
      });
      const perm = hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PermissionRequest', 'Write', { file_path: '/home/dev/demo/.env', content: 'X=1' }),
      );
      const asked = await pendingOf(acct.device_id, 'Write /home/dev/demo/.env');
      await api.device(acct.device_id).post(`/actions/${asked.id}/deny`, {});
      expect((await perm).body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'deny', message: 'Denied by the holder on their device.' },
        },
      });
    });

    it('approves with changes: the edited input reaches Claude Code, the receipt states both hashes', async () => {
      const acct = await api.newAccount();
      const answer = hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PermissionRequest', 'Bash', { command: 'git push --force origin main' }),
      );
      const item = await pendingOf(acct.device_id, 'Run: git push --force origin main');
      expect(item.risk_level).toBe('high');
      const edited = { command: 'git push origin feature-x' };
      const approved = await api
        .device(acct.device_id)
        .post(`/actions/${item.id}/approve`, { content_hash: item.content_hash, updated_input: edited });
      expect(approved.status).toBe(200);
      expect(approved.body.updated_input).toEqual(edited);
      expect((await answer).body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'allow', updatedInput: edited },
        },
      });
      const claims = decodeJwt(approved.body.receipt);
      expect(claims.content_hash).toBe(item.content_hash);
      expect(claims.updated_input_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(claims.updated_input_hash).not.toBe(item.content_hash);
    });

    it('answers Codex as it reads hooks: silence allows, an edit only on PreToolUse, none on PermissionRequest', async () => {
      const acct = await api.newAccount();
      const pre = hook(acct.api_key, 'codex', fixture('codex', 'pre-tool-use.bash.json'));
      const item = await pendingOf(acct.device_id, 'Run: touch /home/dev/app/probe-file');
      expect(item.description).toBe('Codex in /home/dev/app');
      await api.device(acct.device_id).post(`/actions/${item.id}/approve`, { content_hash: item.content_hash });
      expect(await pre).toEqual({ status: 204, body: null });

      const perm = hook(acct.api_key, 'codex', fixture('codex', 'permission-request.bash.json'));
      const asked = await pendingOf(acct.device_id, 'Run: touch /home/dev/app/probe-file');
      const refused = await api
        .device(acct.device_id)
        .post(`/actions/${asked.id}/approve`, { content_hash: asked.content_hash, updated_input: { command: 'ls' } });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^updated_input: /);
      await api.device(acct.device_id).post(`/actions/${asked.id}/approve`, { content_hash: asked.content_hash });
      expect((await perm).body).toEqual({
        hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
      });

      const patch = hook(acct.api_key, 'codex', fixture('codex', 'pre-tool-use.apply-patch.json'));
      const edit = await pendingOf(acct.device_id, 'Edit /home/dev/app/notes.txt');
      const changed = { command: edit.metadata.tool_input.command.replace('goodbye', 'farewell') };
      await api
        .device(acct.device_id)
        .post(`/actions/${edit.id}/approve`, { content_hash: edit.content_hash, updated_input: changed });
      expect((await patch).body).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: changed },
      });
      // A plain request (no tool call) takes no edited input either.
      const plain = await api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title: 'x', amount: 1 });
      const plainEdit = await api
        .device(acct.device_id)
        .post(`/actions/${plain.body.id}/approve`, { updated_input: {} });
      expect(plainEdit.status).toBe(400);
    });

    it.skipIf(mode !== 'all-in-one')(
      "Codex's command hook: the agent-auth-hook bin and the README's curl line pipe stdin through, and block when unreachable",
      async () => {
        const acct = await api.newAccount();
        const env = { ...process.env, AGENT_AUTH_API_KEY: acct.api_key, AGENT_AUTH_URL: baseUrl };
        const input = JSON.stringify(fixture('codex', 'pre-tool-use.bash.json'));
        const bin = fileURLToPath(new URL('../../libs/client/bin/agent-auth-hook.mjs', import.meta.url));
        const viaBin = run('node', [bin, 'codex', '--timeout', '60'], input, env);
        const first = await pendingOf(acct.device_id, 'Run: touch /home/dev/app/probe-file');
        await api.device(acct.device_id).post(`/actions/${first.id}/deny`, { reason: 'not in this folder' });
        const denied = await viaBin;
        expect(denied.code).toBe(0);
        expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({
          permissionDecision: 'deny',
          permissionDecisionReason: 'Denied by the holder: not in this folder',
        });
        // The one-line curl of the README (docs/integrations.md), as Codex runs it through a shell.
        const curlLine =
          'curl -sS --fail-with-body -X POST -H "Content-Type: application/json" -H "X-API-Key: $AGENT_AUTH_API_KEY" ' +
          '--data-binary @- "$AGENT_AUTH_URL/hooks/codex?timeout=60" || { echo "agent-auth: no decision" >&2; exit 2; }';
        const other = JSON.stringify({ ...fixture('codex', 'pre-tool-use.bash.json'), tool_use_id: 'call_second' });
        const viaCurl = run('sh', ['-c', curlLine], other, env);
        const second = await pendingOf(acct.device_id, 'Run: touch /home/dev/app/probe-file');
        await api.device(acct.device_id).post(`/actions/${second.id}/approve`, { content_hash: second.content_hash });
        expect(await viaCurl).toEqual({ code: 0, stdout: '', stderr: '' });
        // Nothing listening: blocked, with the reason on stderr (Codex shows it to the model).
        const down = await run('node', [bin, 'codex'], input, { ...env, AGENT_AUTH_URL: 'http://127.0.0.1:9/api/v1' });
        expect(down.code).toBe(2);
        expect(down.stderr).toMatch(/no answer from .*blocked/);
        const noKey = await run('node', [bin, 'codex'], input, { ...env, AGENT_AUTH_API_KEY: '' });
        expect(noKey.code).toBe(2);
      },
    );

    it('takes every documented fixture of both clients and denies each when the holder denies', async () => {
      const acct = await api.newAccount();
      for (const client of ['claude-code', 'codex']) {
        for (const name of readdirSync(new URL(`${client}/`, fixtures))) {
          const call = hook(acct.api_key, client, fixture(client, name));
          const item = await eventually(async () => {
            const list = await api.device(acct.device_id).get('/pending');
            return (list.body.requests as any[])[0];
          }, 5000).catch(() => {
            throw new Error(`${client}/${name} reached no holder`);
          });
          expect(item.metadata.source, name).toBe(client);
          expect(item.content_hash, name).toMatch(/^[0-9a-f]{64}$/);
          await api.device(acct.device_id).post(`/actions/${item.id}/deny`, { reason: `not ${name}` });
          const reply = await call;
          expect(reply.status, name).toBe(200);
          const output = reply.body.hookSpecificOutput;
          if (output.hookEventName === 'PreToolUse') {
            expect(output, name).toMatchObject({ permissionDecision: 'deny' });
            expect(output.permissionDecisionReason, name).toBe(`Denied by the holder: not ${name}`);
          } else
            expect(output.decision, name).toEqual({ behavior: 'deny', message: `Denied by the holder: not ${name}` });
        }
      }
    }, 120_000);

    it('fails closed on time-out by default, and cancels the request', async () => {
      const acct = await api.newAccount();
      const started = Date.now();
      const reply = await hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PreToolUse', 'Bash', { command: 'make release' }),
        '?timeout=1',
      );
      expect(Date.now() - started).toBeLessThan(5000);
      expect(reply.body.hookSpecificOutput).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: 'No decision from the holder within 1 s: denied (fail closed).',
      });
      const list = await api.agent(acct.api_key).get('/actions?status=cancelled');
      expect(list.body.actions).toHaveLength(1);
      expect(list.body.actions[0]).toMatchObject({ title: 'Run: make release', resolved_by: 'agent' });
      expect((await api.device(acct.device_id).get('/pending')).body.requests).toHaveLength(0);
    });

    it('with on_timeout=ask leaves the decision to the client (no decision; ask for PreToolUse)', async () => {
      const acct = await api.newAccount();
      const perm = await hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PermissionRequest', 'Bash', { command: 'make a' }),
        '?timeout=1&on_timeout=ask',
      );
      expect(perm).toEqual({ status: 200, body: {} });
      const pre = await hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PreToolUse', 'Bash', { command: 'make b' }),
        '?timeout=1&on_timeout=ask',
      );
      expect(pre.body.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'ask' });
      const list = await api.agent(acct.api_key).get('/actions?status=cancelled');
      expect(list.body.actions).toHaveLength(2);
    });

    it('cancels the request when the caller disconnects', async () => {
      const acct = await api.newAccount();
      const abort = new AbortController();
      const call = hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PreToolUse', 'Bash', { command: 'npm publish' }),
        '',
        abort.signal,
      ).catch((err: unknown) => err);
      const item = await pendingOf(acct.device_id, 'Run: npm publish');
      abort.abort();
      await call;
      const cancelled = await eventually(async () => {
        const read = await api.agent(acct.api_key).get(`/actions/${item.id}`);
        return read.body.status === 'cancelled' ? read.body : undefined;
      });
      expect(cancelled).toMatchObject({ resolved_by: 'agent' });
      expect(decodeJwt(cancelled.receipt)).toMatchObject({ status: 'cancelled', resolved_by: 'agent' });
    });

    it('joins a retried call (same tool_use_id; same session, tool and input) to its first request', async () => {
      const acct = await api.newAccount();
      const input = claudeCodeInput('PreToolUse', 'Edit', {
        file_path: '/home/dev/demo/src/app.ts',
        old_string: 'a',
        new_string: 'b',
      });
      const first = hook(acct.api_key, 'claude-code', input);
      const item = await pendingOf(acct.device_id, 'Edit /home/dev/demo/src/app.ts');
      const retry = hook(acct.api_key, 'claude-code', input);
      const { tool_use_id: _, ...withoutId } = input;
      const sameCall = hook(acct.api_key, 'claude-code', withoutId);
      const another = hook(acct.api_key, 'claude-code', { ...withoutId, session_id: 'sess-other' });
      await sleep(300);
      const pending = (await api.device(acct.device_id).get('/pending')).body.requests as any[];
      // The retry joined; the call without an id made one request, a call of another session another.
      expect(pending.map((p) => p.metadata.session_id).sort()).toEqual(['sess-1f2e3d', 'sess-1f2e3d', 'sess-other']);
      await api.device(acct.device_id).post(`/actions/${item.id}/approve`, { content_hash: item.content_hash });
      expect((await first).body.hookSpecificOutput.permissionDecision).toBe('allow');
      expect((await retry).body.hookSpecificOutput.permissionDecision).toBe('allow');
      // A retry after the decision is answered at once.
      expect((await hook(acct.api_key, 'claude-code', input)).body.hookSpecificOutput.permissionDecision).toBe('allow');
      for (const p of pending.filter((r) => r.id !== item.id))
        await api.device(acct.device_id).post(`/actions/${p.id}/deny`, {});
      await Promise.all([sameCall, another]);
    });

    it('lets a rule answer at once, without asking anyone', async () => {
      const acct = await api.newAccount();
      const rule = await api
        .device(acct.device_id)
        .post('/rules', { name: 'reads', decision: 'auto_approve', action_type: 'data_access', risk_level_max: 'low' });
      expect(rule.status).toBe(200);
      const started = Date.now();
      const reply = await hook(
        acct.api_key,
        'claude-code',
        claudeCodeInput('PreToolUse', 'Read', { file_path: '/home/dev/demo/README.md' }),
      );
      expect(Date.now() - started).toBeLessThan(3000);
      expect(reply.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
    });

    it('answers bad input with a clear 4xx', async () => {
      const acct = await api.newAccount();
      const good = claudeCodeInput('PreToolUse', 'Bash', { command: 'ls' });
      const { tool_name: _, ...noTool } = good;
      const missing = await hook(acct.api_key, 'claude-code', noTool);
      expect(missing.status).toBe(400);
      expect(missing.body.detail).toMatch(/^tool_name: /);
      const wrongEvent = await hook(acct.api_key, 'claude-code', { ...good, hook_event_name: 'Stop' });
      expect(wrongEvent.status).toBe(400);
      expect(wrongEvent.body.detail).toMatch(/^hook_event_name: /);
      const notObject = await hook(acct.api_key, 'codex', { ...good, tool_input: 'ls' });
      expect(notObject.status).toBe(400);
      expect(notObject.body.detail).toMatch(/^tool_input: /);
      const big = await hook(acct.api_key, 'claude-code', {
        ...good,
        tool_name: 'Write',
        tool_input: { file_path: '/x', content: 'a'.repeat(70 * 1024) },
      });
      expect(big.status).toBe(413);
      expect(big.body.code).toBe('tool_input_too_large');
      const huge = await hook(acct.api_key, 'claude-code', { ...good, tool_input: { content: 'a'.repeat(90 * 1024) } });
      expect(huge.status).toBe(413);
      const unknown = await hook(acct.api_key, 'cursor', good);
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('hook_client_not_found');
      const badTimeout = await hook(acct.api_key, 'claude-code', good, '?timeout=0');
      expect(badTimeout.status).toBe(400);
      expect(badTimeout.body.detail).toMatch(/^timeout: /);
      const noKey = await fetch(`${baseUrl}/hooks/claude-code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(good),
      });
      expect(noKey.status).toBe(401);
      const malformed = await fetch(`${baseUrl}/hooks/claude-code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acct.api_key },
        body: '{"hook_event_name":',
      });
      expect(malformed.status).toBe(400);
      // Nothing of these reached the holder.
      expect((await api.device(acct.device_id).get('/pending')).body.requests).toHaveLength(0);
    });

    it("cancels an agent's own pending request: once, again without error, never another agent's or a decided one", async () => {
      const acct = await api.newAccount();
      const created = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'Buy', amount: 5 });
      const id = created.body.id as string;
      const cancelled = await api.agent(acct.api_key).post(`/actions/${id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id, status: 'cancelled', resolved_by: 'agent' });
      expect(decodeJwt(cancelled.body.receipt)).toMatchObject({ sub: id, status: 'cancelled' });
      const again = await api.agent(acct.api_key).post(`/actions/${id}/cancel`, {});
      expect(again.status).toBe(200);
      expect(again.body.status).toBe('cancelled');
      expect((await api.device(acct.device_id).get('/pending')).body.requests).toHaveLength(0);
      expect((await api.device(acct.device_id).post(`/actions/${id}/approve`)).status).toBe(409);

      const other = await api.newAccount();
      expect((await api.agent(other.api_key).post(`/actions/${id}/cancel`)).status).toBe(404);
      const decided = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'B', amount: 5 });
      await api.device(acct.device_id).post(`/actions/${decided.body.id}/approve`);
      const late = await api.agent(acct.api_key).post(`/actions/${decided.body.id}/cancel`);
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('action_not_pending');
      const withBody = await api.agent(acct.api_key).post(`/actions/${decided.body.id}/cancel`, { reason: 'x' });
      expect(withBody.status).toBe(400);
    });
  });
}
