// Turning outcomes into MCP tool results. Service errors become tool errors (isError) carrying the service's own
// detail, so the model can read what went wrong and the server never crashes on a bad call.
import { AgentAuthError, WaitTimeoutError } from '@agent-auth/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * A successful tool result: the data as JSON behind a one-line summary for the model, and the same data as
 * `structuredContent` (an object, as the tool's output schema describes) for clients that read it. The JSON is
 * compact: the model reads it as well without indentation, which spent a third more of its tokens (and of the
 * server's time on every call) on spaces.
 */
export function ok(
  summary: string,
  data: unknown,
  structured: Record<string, unknown> = data as Record<string, unknown>,
): CallToolResult {
  return {
    content: [{ type: 'text', text: `${summary}\n${JSON.stringify(data)}` }],
    structuredContent: structured,
  };
}

/** A failed tool result that names the HTTP status and the service's detail. */
export function toolError(err: unknown): CallToolResult {
  let text: string;
  if (err instanceof AgentAuthError) text = `Agent auth service error ${err.status} (${err.name}): ${err.detail}`;
  else if (err instanceof WaitTimeoutError) text = err.message;
  else text = `Could not reach the agent auth service: ${err instanceof Error ? err.message : String(err)}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Runs a tool body and converts any thrown error into a tool error result. */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    return toolError(err);
  }
}
