import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

// "Allow for the rest of the session": a grant with a match approves only the tool calls it names.
const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;
type Body = Record<string, any>;

/** Claude Code's PreToolUse hook input for a Bash command in a session. */
function bashCall(session_id: string, command: string) {
  return {
    session_id,
    transcript_path: `/home/dev/.claude/projects/demo/${session_id}.jsonl`,
    cwd: '/home/dev/demo',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command, description: 'Run it' },
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
  };
}

/** Codex's PreToolUse hook input for a shell call given as argv (the script inside `bash -lc`). */
function codexShellCall(session_id: string, script: string) {
  return {
    session_id,
    turn_id: 'turn-1',
    cwd: '/home/dev/app',
    hook_event_name: 'PreToolUse',
    model: 'gpt-5.5',
    permission_mode: 'default',
    tool_name: 'shell',
    tool_input: { command: ['bash', '-lc', script] },
    tool_use_id: `call_${Math.random().toString(36).slice(2)}`,
  };
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
  describe.skipIf(skip)(`session grants from hook calls (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let baseUrl: string;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'session-grants' });
      baseUrl = stack.baseUrl;
      api = apiClient(baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    /** A hook call as the client makes it: POST with the agent key, the answer awaited. */
    const hook = (apiKey: string, client: string, body: unknown) =>
      fetch(`${baseUrl}/hooks/${client}?timeout=30`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(body),
      }).then(async (r) => {
        const text = await r.text();
        return { status: r.status, body: (text ? JSON.parse(text) : null) as any };
      });

    /** The holder's pending entry of a hook call's request, once it is there. */
    const pendingOf = (acct: Account, title: string, session?: string) =>
      eventually(async () => {
        const list = await api.device(acct.device_id).get('/pending');
        return (list.body.requests as Body[]).find(
          (r) => r.title === title && (session === undefined || r.metadata.session_id === session),
        );
      });

    /** A hook call that stays unanswered: its request waits for the holder (then denied, so the call returns). */
    const expectWaits = async (acct: Account, client: string, body: Body, title: string, session: string) => {
      const answer = hook(acct.api_key, client, body);
      const item = await pendingOf(acct, title, session);
      expect(item.status).toBe('pending');
      expect(item.resolved_by ?? null).toBeNull();
      await api.device(acct.device_id).post(`/actions/${item.id}/deny`, { reason: 'not this one' });
      expect((await answer).body?.hookSpecificOutput?.permissionDecision).toBe('deny');
    };

    /** The hook's requests the agent can read, newest first. */
    const actionsOf = async (acct: Account) => (await api.agent(acct.api_key).get('/actions')).body.actions as Body[];

    it('approving npm test for the session allows its next npm test at once; another session or command waits', async () => {
      const acct = await api.newAccount();
      const session = `sess-${Math.random().toString(36).slice(2)}`;
      const first = hook(acct.api_key, 'claude-code', bashCall(session, 'npm test'));
      const item = await pendingOf(acct, 'Run: npm test');
      const match = { tool_name: 'Bash', session_id: session, command_prefix: 'npm test' };
      const approved = await api.device(acct.device_id).post(`/actions/${item.id}/approve`, {
        content_hash: item.content_hash,
        grant: { duration_seconds: 3600, match },
      });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect((await first).body.hookSpecificOutput.permissionDecision).toBe('allow');

      const grants = (await api.device(acct.device_id).get('/grants')).body.grants as Body[];
      expect(grants).toHaveLength(1);
      expect(grants[0]).toMatchObject({ agent_id: item.agent_id, action_type: 'system', match, uses: 0 });
      const grantId = grants[0]!.grant_id as string;

      // The same session, the same command with more arguments: allowed without asking anyone.
      const started = Date.now();
      const again = await hook(acct.api_key, 'claude-code', bashCall(session, 'npm test -- --watch=false'));
      expect(Date.now() - started).toBeLessThan(3000);
      expect(again.body.hookSpecificOutput).toMatchObject({
        permissionDecision: 'allow',
        permissionDecisionReason: `Approved by the holder (grant:${grantId})`,
      });
      const used = (await actionsOf(acct)).find((a) => a.title === 'Run: npm test -- --watch=false')!;
      expect(used).toMatchObject({ status: 'approved', resolved_by: `grant:${grantId}` });

      // Another session, another command of the same session, a chained command: each waits for the holder.
      await expectWaits(acct, 'claude-code', bashCall('sess-other', 'npm test'), 'Run: npm test', 'sess-other');
      await expectWaits(acct, 'claude-code', bashCall(session, 'rm -rf dist'), 'Run: rm -rf dist', session);
      await expectWaits(
        acct,
        'claude-code',
        bashCall(session, 'npm test && rm -rf dist'),
        'Run: npm test && rm -rf dist',
        session,
      );
      // A plain request of the same agent (no tool call) is no tool call the grant names.
      const plain = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'system', title: 'npm test', risk_level: 'medium' });
      expect(plain.body.status).toBe('pending');

      const after = (await api.device(acct.device_id).get('/grants')).body.grants as Body[];
      expect(after[0]).toMatchObject({ grant_id: grantId, uses: 1 });
    });

    it('a grant without a match keeps approving every similar request; match reads Codex argv commands', async () => {
      const acct = await api.newAccount();
      // Without a match: every system request of the agent without a recipient, tool call or not.
      const first = hook(acct.api_key, 'claude-code', bashCall('sess-a', 'make build'));
      const item = await pendingOf(acct, 'Run: make build');
      await api
        .device(acct.device_id)
        .post(`/actions/${item.id}/approve`, { content_hash: item.content_hash, grant: { duration_seconds: 600 } });
      await first;
      const listed = (await api.device(acct.device_id).get('/grants')).body.grants as Body[];
      expect(listed[0]!.match).toBeNull();
      const other = await hook(acct.api_key, 'claude-code', bashCall('sess-b', 'make clean'));
      expect(other.body.hookSpecificOutput.permissionDecision).toBe('allow');
      const revoked = await api.device(acct.device_id).delete(`/grants/${listed[0]!.grant_id}`);
      expect(revoked.status).toBe(200);

      // Codex gives the command as argv; the script inside `bash -lc` is what the prefix is matched against.
      const codex = hook(acct.api_key, 'codex', codexShellCall('cx-1', 'cargo test'));
      const asked = await pendingOf(acct, 'Run: cargo test', 'cx-1');
      await api.device(acct.device_id).post(`/actions/${asked.id}/approve`, {
        content_hash: asked.content_hash,
        grant: { duration_seconds: 600, match: { session_id: 'cx-1', command_prefix: 'cargo test' } },
      });
      expect((await codex).status).toBe(204);
      const next = await hook(acct.api_key, 'codex', codexShellCall('cx-1', 'cargo test --release'));
      expect(next.status).toBe(204);
      const byGrant = (await actionsOf(acct)).find((a) => a.title === 'Run: cargo test --release')!;
      expect(byGrant.resolved_by).toMatch(/^grant:grt_/);
      await expectWaits(acct, 'codex', codexShellCall('cx-1', 'cargo publish'), 'Run: cargo publish', 'cx-1');
    });

    it('refuses a match that names nothing, naming grant.match', async () => {
      const acct = await api.newAccount();
      const answer = hook(acct.api_key, 'claude-code', bashCall('sess-v', 'npm test'));
      const item = await pendingOf(acct, 'Run: npm test');
      for (const match of [{}, { tool_name: null, session_id: null }, { command_prefix: '' }]) {
        const refused = await api.device(acct.device_id).post(`/actions/${item.id}/approve`, {
          content_hash: item.content_hash,
          grant: { duration_seconds: 3600, match },
        });
        expect(refused.status, JSON.stringify(match)).toBe(400);
        expect(refused.body.code).toBe('invalid_request');
        expect(refused.body.detail).toMatch(/^grant\.match/);
      }
      // Nothing was decided: the request still waits, and no grant was made.
      expect((await api.device(acct.device_id).get('/grants')).body.grants).toEqual([]);
      await api.device(acct.device_id).post(`/actions/${item.id}/deny`, {});
      expect((await answer).body.hookSpecificOutput.permissionDecision).toBe('deny');
    });
  });
}
