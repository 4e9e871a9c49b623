import { z } from 'zod';
import { StoredText } from '../validation.js';

/** The coding agents whose hooks the service answers, by the path segment of POST /hooks/{client}. */
export const hookClients = ['claude-code', 'codex'] as const;
export const HookClient = z.enum(hookClients);
export type HookClient = z.infer<typeof HookClient>;

/** The hook events that ask whether a tool may run. */
export const hookEvents = ['PreToolUse', 'PermissionRequest'] as const;

/** Largest tool input a hook call may carry, in bytes of its JSON: larger is a 413 and the client asks its user. */
export const MAX_TOOL_INPUT_BYTES = 64 * 1024;
/** Largest hook body: the tool input and the client's other fields around it. */
export const MAX_HOOK_BODY_BYTES = MAX_TOOL_INPUT_BYTES + 16 * 1024;

/** Longest a hook call holds its answer, in seconds, and the default (under Claude Code's own default of 300). */
export const MAX_HOOK_TIMEOUT_SECONDS = 3600;
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 290;

/**
 * A hook's input as Claude Code and Codex send it: the fields the service reads, every other field the client
 * adds (transcript_path, permission_mode, model, turn_id, …) accepted and ignored.
 */
export const HookInput = z.looseObject({
  hook_event_name: z.enum(hookEvents),
  tool_name: StoredText().min(1).max(200),
  tool_input: z.record(z.string(), z.unknown()),
  session_id: StoredText().max(200).nullish(),
  cwd: StoredText().max(4096).nullish(),
  tool_use_id: StoredText().max(200).nullish(),
});
export type HookInput = z.infer<typeof HookInput>;

/** Query of POST /hooks/{client}: how long to hold the answer, and what to answer if nobody decides by then. */
export const HookQuery = z.object({
  timeout: z.coerce
    .number()
    .int('must be a whole number of seconds')
    .min(1, `must be 1 to ${MAX_HOOK_TIMEOUT_SECONDS} seconds`)
    .max(MAX_HOOK_TIMEOUT_SECONDS, `must be 1 to ${MAX_HOOK_TIMEOUT_SECONDS} seconds`)
    .default(DEFAULT_HOOK_TIMEOUT_SECONDS)
    .describe('Longest the answer is held while the holder decides, in seconds (1-3600, default 290)'),
  on_timeout: z
    .enum(['deny', 'ask'])
    .default('deny')
    .describe(
      'What to answer when nobody decided in time: `deny` (fail closed) or `ask` (no decision: the client asks ' +
        'its own user). Either way the request is cancelled.',
    ),
});
export type HookQuery = z.infer<typeof HookQuery>;

/** Path of POST /hooks/{client}. */
export const HookParams = z.object({ client: z.string().max(100) });
