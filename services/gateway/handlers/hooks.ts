import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { hookClients, HookInput, HookQuery, MAX_HOOK_BODY_BYTES, MAX_TOOL_INPUT_BYTES } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Bus } from '@agent-auth/bus';
import { addRoute, NO_CONTENT } from './route.js';
import type { WaitRegistry } from '../use-cases/held-waits.js';
import { createHookCalls } from '../use-cases/hook-calls.js';

const DESCRIPTION =
  "The body is the client's own hook input (`hook_event_name` `PreToolUse` or `PermissionRequest`, " +
  '`tool_name`, `tool_input`, `session_id`, `cwd`, `tool_use_id`, …). It becomes an action request ' +
  '(`metadata.source` the client; the whole tool input, at most 64 KiB, bound by `content_hash`); rules, ' +
  'limits and grants settle it at once, otherwise the answer is held until the holder decides, at most ' +
  "`timeout` seconds (1-3600, default 290). The answer is the client's own hook output: allow (with " +
  "`updatedInput` when the holder approved with changes), or deny with the holder's reason as the message " +
  'for the model. Nobody decided in time: `on_timeout=deny` (default, fail closed) or `ask` (no decision, the ' +
  'client asks its user); either way the request is cancelled, as it is when the caller disconnects. A retried ' +
  'call (same `tool_use_id`, or same session, tool and input within 10 minutes) joins its first request. ' +
  '413 for a tool input over 64 KiB; 404 for a client other than `claude-code` and `codex`.';

/** The hook output a client reads: Claude Code's or Codex's own JSON (allow, deny with a message, or ask). */
const HookOutput = z.record(z.string(), z.unknown());

/** Coding agents' permission hooks: the client's hook input in, its hook output out, once the holder decides. */
export function hookRoutes(app: FastifyInstance, bus: Bus, waits: WaitRegistry): void {
  const answerHookCall = createHookCalls({ bus, waits });
  for (const client of hookClients) {
    addRoute(app, {
      method: 'POST',
      url: `/hooks/${client}`,
      tag: 'Hooks',
      summary: `Answer ${client === 'codex' ? "Codex's" : "Claude Code's"} permission hook`,
      description: DESCRIPTION,
      auth: 'agent',
      query: HookQuery,
      body: HookInput,
      bodyLimit: MAX_HOOK_BODY_BYTES,
      response: HookOutput,
      handler: async ({ principal, query, body, requestId, onClientGone }) => {
        if (Buffer.byteLength(JSON.stringify(body.tool_input)) > MAX_TOOL_INPUT_BYTES)
          throw errors.toolInputTooLarge(MAX_TOOL_INPUT_BYTES);
        const answer = await answerHookCall({ client, agent: principal, input: body, query, requestId, onClientGone });
        // No output at all is how Codex is told "no objection" (its curl command then prints nothing).
        if (answer === null) return NO_CONTENT;
        return answer;
      },
    });
  }
  // Any other client: a clear 404 naming the ones there are (the router prefers the routes above).
  app.post('/hooks/:client', { config: { auth: 'agent' } }, async (request) => {
    throw errors.hookClientNotFound(String((request.params as { client?: string }).client ?? ''));
  });
}
