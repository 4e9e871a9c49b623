// Which tool calls the gate holds for a human's approval. Annotations are the server's own hints (MCP spec: a
// client must not rely on them from a server it does not trust); `--ask all` holds every call regardless.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** `writes`: every tool not annotated `readOnlyHint: true`; `all`: every tool. */
export type AskMode = 'all' | 'writes';

export const ASK_MODES: readonly AskMode[] = ['writes', 'all'];

/**
 * Whether a call of `tool` needs the holder's approval. A tool the server did not list (undefined) needs it: the
 * gate cannot tell it reads only.
 */
export function needsApproval(tool: Pick<Tool, 'annotations'> | undefined, ask: AskMode): boolean {
  if (ask === 'all') return true;
  return tool?.annotations?.readOnlyHint !== true;
}
