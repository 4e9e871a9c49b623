/** A grant's match: only tool calls of this tool, in this session, whose shell command starts so (null: any). */
export interface GrantMatch {
  tool_name: string | null;
  session_id: string | null;
  command_prefix: string | null;
}

/** A grant's match as its columns hold it. */
export interface GrantMatchColumns {
  match_tool_name: string | null;
  match_session_id: string | null;
  match_command_prefix: string | null;
}

/** The match of a grant's columns: null when none is set (the grant approves any request of its scope). */
export function grantMatchOf(c: GrantMatchColumns): GrantMatch | null {
  if (c.match_tool_name === null && c.match_session_id === null && c.match_command_prefix === null) return null;
  return { tool_name: c.match_tool_name, session_id: c.match_session_id, command_prefix: c.match_command_prefix };
}

/** What a decision knows of a live grant (the replica's copy); its budget and uses are read under the lock. */
export interface GrantScope {
  id: string;
  agent_id: string;
  action_type: string;
  recipient: string | null;
  currency: string;
  expires_at: Date;
  /** Null for a grant that approves any request of its scope. */
  match: GrantMatch | null;
}

/** The parts of an action request a grant is scoped to; the tool call facts are absent for any other request. */
export interface GrantFacts {
  agent_id: string;
  action_type: string;
  recipient?: string | null;
  currency: string;
  tool_name?: string | null;
  session_id?: string | null;
  command?: string | null;
}

// What may follow a command prefix and still be the same one command: no list, pipe, background job, command or
// process substitution, or redirection. Anything else is a different command the holder was not shown.
const CHAINED = /[;&|<>`\n\r]|\$\(/;
// Output that only goes to the terminal or nowhere is not a redirection to a file.
const HARMLESS_REDIRECTS = /\s2>&1(?=\s|$)|\s[12]?>\s*\/dev\/null(?=\s|$)/g;
const WORD_CHAR = /[\w-]/;

/**
 * Whether a shell command is the prefix's command with more arguments: it starts with the prefix, does not go on
 * with the prefix's last word (`npm test` is not `npm testify`), and chains or redirects nothing after it.
 */
export function commandStartsWith(command: string | null | undefined, prefix: string): boolean {
  if (!command) return false;
  const line = command.trimStart();
  if (!line.startsWith(prefix)) return false;
  const rest = line.slice(prefix.length);
  if (rest.length > 0 && WORD_CHAR.test(prefix.at(-1) ?? '') && WORD_CHAR.test(rest[0]!)) return false;
  return !CHAINED.test(rest.replace(HARMLESS_REDIRECTS, ''));
}

/** Whether a tool call meets every set field of a grant's match; a request that is no tool call meets none. */
export function matchCovers(match: GrantMatch | null, action: GrantFacts): boolean {
  if (match === null) return true;
  if (match.tool_name !== null && match.tool_name !== action.tool_name) return false;
  if (match.session_id !== null && match.session_id !== action.session_id) return false;
  return match.command_prefix === null || commandStartsWith(action.command, match.command_prefix);
}

/**
 * Whether a grant covers a request: same agent, action type and currency, and the same recipient. A
 * grant made from a request without a recipient covers only requests without one: it never reaches a payee the
 * holder was not shown. A grant with a match covers only the tool calls it names.
 */
export function grantCovers(grant: GrantScope, action: GrantFacts, now: Date): boolean {
  return (
    grant.expires_at.getTime() > now.getTime() &&
    grant.agent_id === action.agent_id &&
    grant.action_type === action.action_type &&
    grant.currency === action.currency &&
    grant.recipient === (action.recipient ?? null) &&
    matchCovers(grant.match, action)
  );
}

/** The grants that may approve the request, soonest to expire first (so the shortest-lived budget is used first). */
export function coveringGrants<G extends GrantScope>(grants: readonly G[], action: GrantFacts, now: Date): G[] {
  return grants
    .filter((g) => grantCovers(g, action, now))
    .sort((a, b) => a.expires_at.getTime() - b.expires_at.getTime());
}
