import type { ActionType, RiskLevel } from '../enums.js';
import { shellCommandRisk } from './shell-risk.js';

/** Where a tool call comes from: a coding agent's hook, or the MCP gate in front of an MCP server. */
export type ToolCallSource = 'claude-code' | 'codex' | 'mcp';

/** A tool call as an agent is about to make it. */
export interface ToolCall {
  source: ToolCallSource;
  tool_name: string;
  tool_input: Record<string, unknown>;
  cwd?: string | null;
}

/** What the holder is asked about a tool call: the fields of an action request that say what it does. */
export interface ToolCallRequest {
  action_type: ActionType;
  risk_level: RiskLevel;
  reversible: boolean;
  title: string;
}

const TITLE_MAX = 200;
const SOURCE_NAMES: Record<ToolCallSource, string> = { 'claude-code': 'Claude Code', codex: 'Codex', mcp: 'MCP' };

/** The client's name as a person knows it. */
export function toolCallSourceName(source: ToolCallSource): string {
  return SOURCE_NAMES[source];
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** A shell command as the clients give it: one string, or an argv array (Codex). */
export function shellCommandOf(input: Record<string, unknown>): string | null {
  const command = input.command ?? input.cmd;
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
    // Codex wraps a script as ["bash", "-lc", "<script>"]: the script is what the holder should read.
    const [shell, flag, script] = command as string[];
    if (command.length === 3 && /(^|\/)(ba|z)?sh$/.test(shell ?? '') && /^-l?c$/.test(flag ?? '')) return script!;
    return (command as string[]).join(' ');
  }
  return text(command);
}

/** One line, at most the title's length: a person reads it at a glance. */
function titleOf(verb: string, subject: string | null): string {
  const line = subject ? `${verb} ${subject.replace(/\s+/g, ' ').trim()}` : verb;
  return line.length <= TITLE_MAX ? line : `${line.slice(0, TITLE_MAX - 1)}…`;
}

const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command', 'container.exec', 'unified_exec']);
const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'apply_patch']);
const READ_TOOLS = new Set(['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'BashOutput', 'TodoWrite', 'view_image']);
const WEB_TOOLS = new Set(['WebFetch', 'WebSearch', 'web_search']);

/** The file an edit changes: the path the client names, or the first one an apply_patch names. */
function editedFile(input: Record<string, unknown>): string | null {
  const named = text(input.file_path) ?? text(input.notebook_path) ?? text(input.path);
  if (named) return named;
  const patch = text(input.patch) ?? text(input.input) ?? text(input.command);
  const match = patch?.match(/^\*\*\* (?:Update|Add|Delete) File: (.+)$/m);
  return match?.[1] ?? null;
}

/** `mcp__server__tool` (Claude Code's name for an MCP server's tool): the server and the tool. */
function mcpParts(toolName: string): { server: string; tool: string } | null {
  const match = toolName.match(/^mcp__(.+?)__(.+)$/);
  return match ? { server: match[1]!, tool: match[2]! } : null;
}

/**
 * What a tool call asks, as an action request: shell commands are `system`, high risk when they can do lasting
 * harm (shellCommandRisk), low when they only read; edits are `system`, medium (high for a patch that deletes a
 * file); reads are `data_access`, low; web fetches and searches `data_access`, low; anything else (MCP tools
 * included) `system`, medium.
 */
export function toolCallRequest(call: ToolCall): ToolCallRequest {
  const { tool_name: tool, tool_input: input } = call;
  if (SHELL_TOOLS.has(tool)) {
    const command = shellCommandOf(input) ?? '';
    const risk = shellCommandRisk(command);
    return { action_type: 'system', risk_level: risk, reversible: risk !== 'high', title: titleOf('Run:', command) };
  }
  if (EDIT_TOOLS.has(tool)) {
    const deletes = /^\*\*\* Delete File: /m.test(text(input.patch) ?? text(input.input) ?? text(input.command) ?? '');
    const verb = tool === 'Write' ? 'Write' : 'Edit';
    return {
      action_type: 'system',
      risk_level: deletes ? 'high' : 'medium',
      reversible: !deletes,
      title: titleOf(verb, editedFile(input) ?? tool),
    };
  }
  if (READ_TOOLS.has(tool)) {
    const subject = text(input.file_path) ?? text(input.pattern) ?? text(input.path);
    return { action_type: 'data_access', risk_level: 'low', reversible: true, title: titleOf(tool, subject) };
  }
  if (WEB_TOOLS.has(tool)) {
    const url = text(input.url);
    const title = url ? titleOf('Fetch', url) : titleOf('Search the web:', text(input.query));
    return { action_type: 'data_access', risk_level: 'low', reversible: true, title };
  }
  if (tool === 'Agent' || tool === 'Task') {
    const title = titleOf('Start a subagent:', text(input.description));
    return { action_type: 'system', risk_level: 'low', reversible: true, title };
  }
  const mcp = mcpParts(tool);
  const name = mcp ? `${mcp.server}: ${mcp.tool}` : tool;
  return { action_type: 'system', risk_level: 'medium', reversible: true, title: titleOf('Use', name) };
}

/** The request's description: which agent asks, and where it works. */
export function toolCallDescription(call: Pick<ToolCall, 'source' | 'cwd'>, detail?: string | null): string {
  const where = call.cwd ? ` in ${call.cwd}` : '';
  const extra = detail ? `: ${detail}` : '';
  return `${toolCallSourceName(call.source)}${where}${extra}`.slice(0, 2000);
}
