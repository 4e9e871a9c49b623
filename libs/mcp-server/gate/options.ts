// The command line of agent-auth-mcp-gate.
import { ASK_MODES, type AskMode } from './approval-policy.js';

export const DEFAULT_TIMEOUT_SECONDS = 300;
// The service keeps a request answerable for at most an hour.
export const MAX_TIMEOUT_SECONDS = 3600;

export const USAGE = `Usage: agent-auth-mcp-gate [--ask writes|all] [--timeout SECONDS] -- <command> [args...]

Starts the MCP server <command> and serves its tools, resources and prompts on stdio; a tool call that needs
approval waits for the holder's answer through the agent action authorization service.

  --ask writes     hold every tool not annotated readOnlyHint: true (default)
  --ask all        hold every tool call
  --timeout S      seconds to wait for the holder, 1 to ${MAX_TIMEOUT_SECONDS} (default ${DEFAULT_TIMEOUT_SECONDS}); the call is then refused

Environment: AGENT_AUTH_API_KEY (aa_...), AGENT_AUTH_URL (the service base URL ending in /api/v1).
`;

export interface GateCommand {
  ask: AskMode;
  timeoutSeconds: number;
  command: string;
  args: string[];
}

/** A command line the gate cannot run; its message says what is wrong. */
export class UsageError extends Error {}

function askMode(value: string): AskMode {
  if ((ASK_MODES as readonly string[]).includes(value)) return value as AskMode;
  throw new UsageError(`--ask must be one of ${ASK_MODES.join(', ')}, not "${value}"`);
}

function timeoutSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > MAX_TIMEOUT_SECONDS)
    throw new UsageError(
      `--timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}, not "${value}"`,
    );
  return seconds;
}

/**
 * The gate's options, then the wrapped server's command line: after `--`, or from the first argument that is not
 * one of the gate's options. `help` when asked for the usage.
 */
export function parseGateArgs(argv: readonly string[]): GateCommand | 'help' {
  let ask: AskMode = 'writes';
  let timeout = DEFAULT_TIMEOUT_SECONDS;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (arg === '-h' || arg === '--help') return 'help';
    const [name, inline] = /^--[^=]+=/.test(arg)
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    if (name === '--ask' || name === '--timeout') {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      if (name === '--ask') ask = askMode(value);
      else timeout = timeoutSeconds(value);
      continue;
    }
    if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    break;
  }
  const [command, ...args] = argv.slice(i);
  if (!command) throw new UsageError('name the MCP server to start, after --');
  return { ask, timeoutSeconds: timeout, command, args };
}
