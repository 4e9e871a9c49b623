import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { ensureAgentClis, removeCliHomes, runClaudeCode, runCodex } from '../harness/scripted-agent-clis.js';
import {
  type AnthropicScript,
  startScriptedAnthropicModel,
  toolResultText,
} from '../harness/scripted-anthropic-model.js';
import { startEgressRecorder, type EgressRecorder } from '../harness/scripted-egress-recorder.js';
import { startScriptedHookEndpoint } from '../harness/scripted-hook-endpoint.js';
import { functionOutputText, type OpenAiScript, startScriptedOpenAiModel } from '../harness/scripted-openai-model.js';
import { startStack, type Stack } from '../harness/stack.js';

// The real Claude Code and Codex CLIs, each driven by a scripted model on loopback, with their permission hook
// pointed at the gateway's /hooks endpoints; the holder decides through the device API. Nothing leaves the machine:
// the models are local and every other connection goes to a proxy that refuses it.

const { natsUrl } = inject('infra');
const available = await ensureAgentClis();
const skip = 'skip' in available ? available.skip : false;
const FIXTURES = join(import.meta.dirname, '../fixtures/hooks');

/** Claude Code's model: one Bash call on the agent loop's first turn, then a final text; side calls get text. */
const oneBashCall =
  (command: string): AnthropicScript =>
  ({ body, turn }) => {
    const agentLoop = (body.tools ?? []).some((tool: any) => tool.name === 'Bash');
    if (agentLoop && turn === 0)
      return { toolUses: [{ name: 'Bash', input: { command, description: 'Do the task' } }] };
    return { text: 'Finished.' };
  };

/** Codex's model: one exec_command call on the first turn, then a final text. */
const oneExecCall =
  (cmd: string): OpenAiScript =>
  ({ turn }) =>
    turn === 0 ? { functionCalls: [{ name: 'exec_command', arguments: { cmd } }] } : { text: 'Finished.' };

/** The tool results Claude Code sent back to its model on the agent loop's last turn. */
function lastToolResults(calls: any[]) {
  const loop = calls.filter((body) => (body.tools ?? []).some((tool: any) => tool.name === 'Bash'));
  const last = loop.at(-1);
  return (last?.messages ?? [])
    .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: any) => b.type === 'tool_result');
}

/** A JSON value's shape: keys and value types, recursively (ids, paths and texts differ between runs). */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shapeOf(v)]));
  return typeof value;
}

const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

// A CLI run takes 2-10 s alone and more on a loaded machine: each test may take up to two minutes.
describe.skipIf(skip)(
  `real coding-agent CLIs against the hook endpoints${skip ? `; skipped: ${skip}` : ''}`,
  { timeout: 120_000 },
  () => {
    const clis = 'clis' in available ? available.clis : { claudeCode: '', codex: '' };
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let egress: EgressRecorder;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, natsUrl, name: 'agent-clis' });
      api = apiClient(stack.baseUrl);
      egress = await startEgressRecorder();
    });
    afterAll(async () => {
      removeCliHomes();
      await egress?.close();
      await stack?.stop();
      await db?.drop();
    });

    /** The holder: waits for the pending request a hook created, checks it, then approves or denies it on the device. */
    async function holderDecides(
      deviceId: string,
      matches: (item: any) => boolean,
      decide: (item: any) => { verb: 'approve' | 'deny'; body?: Record<string, unknown> },
    ): Promise<any> {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const list = await api.device(deviceId).get('/pending');
        const item = (list.body.requests as any[]).find(matches);
        if (item) {
          const { verb, body } = decide(item);
          const answer = await api.device(deviceId).post(`/actions/${item.id}/${verb}`, body ?? {});
          expect(answer.status).toBe(200);
          return item;
        }
        if (Date.now() > deadline) throw new Error('the hook created no pending request in time');
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    describe('Claude Code', () => {
      it('PreToolUse: the holder approves, the Bash command runs', async () => {
        const acct = await api.newAccount();
        const model = await startScriptedAnthropicModel(oneBashCall('touch approved.txt'));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === 'touch approved.txt',
            (item) => ({ verb: 'approve', body: { content_hash: item.content_hash } }),
          );
          const run = await runClaudeCode({
            binary: clis.claudeCode,
            modelUrl: model.url,
            hook: { url: `${stack.baseUrl}/hooks/claude-code?timeout=90`, apiKey: acct.api_key },
            event: 'PreToolUse',
            prompt: 'Create approved.txt',
            proxyUrl: egress.url,
          });
          const item = await holder;
          expect(item.metadata).toMatchObject({
            source: 'claude-code',
            hook_event_name: 'PreToolUse',
            tool_name: 'Bash',
            cwd: run.workDir,
            tool_input: { command: 'touch approved.txt', description: 'Do the task' },
          });
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'approved.txt'))).toBe(true);
          expect(lastToolResults(model.messagesCalls())).toMatchObject([{ is_error: false }]);
          // The disable-nonessential-traffic setting keeps Claude Code on loopback: it tried no outside host.
          expect(egress.attempts).toEqual([]);
        } finally {
          await model.close();
        }
      });

      it("PreToolUse: the holder denies, the command does not run and the model reads the holder's reason", async () => {
        const acct = await api.newAccount();
        const model = await startScriptedAnthropicModel(oneBashCall('touch denied.txt'));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === 'touch denied.txt',
            () => ({ verb: 'deny', body: { reason: 'not on a Friday' } }),
          );
          const run = await runClaudeCode({
            binary: clis.claudeCode,
            modelUrl: model.url,
            hook: { url: `${stack.baseUrl}/hooks/claude-code?timeout=90`, apiKey: acct.api_key },
            event: 'PreToolUse',
            prompt: 'Create denied.txt',
            proxyUrl: egress.url,
          });
          await holder;
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'denied.txt'))).toBe(false);
          const [result] = lastToolResults(model.messagesCalls());
          expect(result.is_error).toBe(true);
          expect(toolResultText(result)).toBe('Denied by the holder: not on a Friday');
        } finally {
          await model.close();
        }
      });

      it('PermissionRequest: the holder approves with changes, the edited command runs instead', async () => {
        const acct = await api.newAccount();
        const original = `node -e "require('fs').writeFileSync('original.txt', '')"`;
        const edited = `node -e "require('fs').writeFileSync('edited.txt', '')"`;
        const model = await startScriptedAnthropicModel(oneBashCall(original));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === original,
            (item) => ({
              verb: 'approve',
              body: { content_hash: item.content_hash, updated_input: { command: edited, description: 'Do the task' } },
            }),
          );
          const run = await runClaudeCode({
            binary: clis.claudeCode,
            modelUrl: model.url,
            hook: { url: `${stack.baseUrl}/hooks/claude-code?timeout=90`, apiKey: acct.api_key },
            event: 'PermissionRequest',
            prompt: 'Create the file',
            proxyUrl: egress.url,
          });
          const item = await holder;
          expect(item.metadata).toMatchObject({ source: 'claude-code', hook_event_name: 'PermissionRequest' });
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'edited.txt'))).toBe(true);
          expect(existsSync(join(run.workDir, 'original.txt'))).toBe(false);
        } finally {
          await model.close();
        }
      });

      it('sends hook inputs of the shape the fixtures record (PreToolUse Bash)', async () => {
        const endpoint = await startScriptedHookEndpoint(() => ({
          body: {
            hookSpecificOutput: {
              hookEventName: 'PreToolUse',
              permissionDecision: 'deny',
              permissionDecisionReason: 'recorded',
            },
          },
        }));
        const model = await startScriptedAnthropicModel(oneBashCall('touch recorded.txt'));
        try {
          await runClaudeCode({
            binary: clis.claudeCode,
            modelUrl: model.url,
            hook: { url: `${endpoint.url}/hooks/claude-code`, apiKey: 'aa_recorded' },
            event: 'PreToolUse',
            prompt: 'Create recorded.txt',
            proxyUrl: egress.url,
          });
          expect(endpoint.calls).toHaveLength(1);
          expect(endpoint.calls[0].headers.authorization).toBe('Bearer aa_recorded');
          const { timeout: _, ...bashShape } = fixture('claude-code/pre-tool-use.bash.json').tool_input;
          expect(shapeOf(endpoint.calls[0].body)).toEqual(
            shapeOf({ ...fixture('claude-code/pre-tool-use.bash.json'), tool_input: bashShape }),
          );
        } finally {
          await Promise.all([model.close(), endpoint.close()]);
        }
      });
    });

    describe('Codex', () => {
      it('PreToolUse: the holder approves, the shell command runs', async () => {
        const acct = await api.newAccount();
        const model = await startScriptedOpenAiModel(oneExecCall('touch approved.txt'));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === 'touch approved.txt',
            (item) => ({ verb: 'approve', body: { content_hash: item.content_hash } }),
          );
          const run = await runCodex({
            binary: clis.codex,
            modelBaseUrl: model.baseUrl,
            hook: { url: `${stack.baseUrl}/hooks/codex?timeout=90`, apiKey: acct.api_key },
            prompt: 'Create approved.txt',
            proxyUrl: egress.url,
          });
          const item = await holder;
          expect(item.metadata).toMatchObject({ source: 'codex', hook_event_name: 'PreToolUse', tool_name: 'Bash' });
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'approved.txt'))).toBe(true);
          // With plugins and analytics off, Codex too stays on loopback.
          expect(egress.attempts).toEqual([]);
        } finally {
          await model.close();
        }
      });

      it("PreToolUse: the holder denies, the command does not run and the model reads the holder's reason", async () => {
        const acct = await api.newAccount();
        const model = await startScriptedOpenAiModel(oneExecCall('touch denied.txt'));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === 'touch denied.txt',
            () => ({ verb: 'deny', body: { reason: 'not on a Friday' } }),
          );
          const run = await runCodex({
            binary: clis.codex,
            modelBaseUrl: model.baseUrl,
            hook: { url: `${stack.baseUrl}/hooks/codex?timeout=90`, apiKey: acct.api_key },
            prompt: 'Create denied.txt',
            proxyUrl: egress.url,
          });
          await holder;
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'denied.txt'))).toBe(false);
          const outputs = model
            .responsesCalls()
            .at(-1)
            .input.filter((i: any) => i.type === 'function_call_output');
          expect(outputs.map(functionOutputText)).toEqual([
            'Command blocked by PreToolUse hook: Denied by the holder: not on a Friday. Command: touch denied.txt',
          ]);
        } finally {
          await model.close();
        }
      });

      it('PreToolUse: the holder approves with changes, the edited command runs instead', async () => {
        const acct = await api.newAccount();
        const model = await startScriptedOpenAiModel(oneExecCall('touch original.txt'));
        try {
          const holder = holderDecides(
            acct.device_id,
            (item) => item.metadata?.tool_input?.command === 'touch original.txt',
            (item) => ({
              verb: 'approve',
              body: { content_hash: item.content_hash, updated_input: { command: 'touch edited.txt' } },
            }),
          );
          const run = await runCodex({
            binary: clis.codex,
            modelBaseUrl: model.baseUrl,
            hook: { url: `${stack.baseUrl}/hooks/codex?timeout=90`, apiKey: acct.api_key },
            prompt: 'Create original.txt',
            proxyUrl: egress.url,
          });
          await holder;
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'edited.txt'))).toBe(true);
          expect(existsSync(join(run.workDir, 'original.txt'))).toBe(false);
        } finally {
          await model.close();
        }
      });

      it('fails closed when the endpoint refuses the call: the hook exits 2 and the command does not run', async () => {
        const model = await startScriptedOpenAiModel(oneExecCall('touch refused.txt'));
        try {
          const run = await runCodex({
            binary: clis.codex,
            modelBaseUrl: model.baseUrl,
            hook: { url: `${stack.baseUrl}/hooks/codex`, apiKey: 'aa_not_a_key' },
            prompt: 'Create refused.txt',
            proxyUrl: egress.url,
          });
          expect(run.exitCode, run.stderr).toBe(0);
          expect(existsSync(join(run.workDir, 'refused.txt'))).toBe(false);
          const outputs = model
            .responsesCalls()
            .at(-1)
            .input.filter((i: any) => i.type === 'function_call_output');
          expect(outputs.map(functionOutputText)[0]).toMatch(/^Command blocked by PreToolUse hook: /);
        } finally {
          await model.close();
        }
      });

      it('sends hook inputs of the shape the fixtures record (PreToolUse exec_command as Bash)', async () => {
        const endpoint = await startScriptedHookEndpoint(() => ({
          body: {
            hookSpecificOutput: {
              hookEventName: 'PreToolUse',
              permissionDecision: 'deny',
              permissionDecisionReason: 'recorded',
            },
          },
        }));
        const model = await startScriptedOpenAiModel(oneExecCall('touch recorded.txt'));
        try {
          await runCodex({
            binary: clis.codex,
            modelBaseUrl: model.baseUrl,
            hook: { url: `${endpoint.url}/hooks/codex`, apiKey: 'aa_recorded' },
            prompt: 'Create recorded.txt',
            proxyUrl: egress.url,
          });
          expect(endpoint.calls).toHaveLength(1);
          expect(endpoint.calls[0].headers.authorization).toBe('Bearer aa_recorded');
          expect(endpoint.calls[0].body.tool_input).toEqual({ command: 'touch recorded.txt' });
          expect(shapeOf(endpoint.calls[0].body)).toEqual(shapeOf(fixture('codex/pre-tool-use.bash.json')));
        } finally {
          await Promise.all([model.close(), endpoint.close()]);
        }
      });
    });
  },
);
