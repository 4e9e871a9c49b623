#!/usr/bin/env node
// Entry point of `agent-auth-mcp-gate`: starts the MCP server named on the command line and serves it on stdio,
// holding the tool calls that need approval. stdout is the MCP channel, so every diagnostic goes to stderr.
import { basename } from 'node:path';
import { AgentAuthClient } from '@agent-auth/client';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpGate } from './gate/gate.js';
import { parseGateArgs, USAGE, UsageError, type GateCommand } from './gate/options.js';

const log = (line: string) => process.stderr.write(`agent-auth-mcp-gate: ${line}\n`);

let command: GateCommand | 'help';
try {
  command = parseGateArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`agent-auth-mcp-gate: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (command === 'help') {
  process.stdout.write(USAGE);
  process.exit(0);
}
const apiKey = process.env.AGENT_AUTH_API_KEY;
const baseUrl = process.env.AGENT_AUTH_URL;
if (!apiKey || !baseUrl) {
  log('set AGENT_AUTH_API_KEY (aa_...) and AGENT_AUTH_URL (the service base URL ending in /api/v1)');
  process.exit(2);
}

// The wrapped server runs with the gate's environment, but never sees the agent's key.
const childEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env))
  if (value !== undefined && !name.startsWith('AGENT_AUTH_')) childEnv[name] = value;

const gate = new McpGate({
  caller: new StdioServerTransport(),
  child: new StdioClientTransport({ command: command.command, args: command.args, env: childEnv, stderr: 'inherit' }),
  client: new AgentAuthClient({ apiKey, baseUrl }),
  ask: command.ask,
  timeoutSeconds: command.timeoutSeconds,
  fallbackName: basename(command.command),
  log,
});
gate.onclose = () => process.exit(0);
// The SDK's stdio transport does not notice the client going away: the end of stdin is that signal.
process.stdin.on('end', () => void gate.close('the client closed stdin'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void gate.close(`${signal} received`));
process.on('unhandledRejection', (err) => log(`unhandled rejection: ${String(err)}`));

try {
  await gate.start();
} catch (err) {
  log(`could not start ${command.command}: ${String(err)}`);
  process.exit(1);
}
const held = command.ask === 'all' ? 'every tool call' : 'tool calls not annotated read-only';
log(`ready on stdio: ${basename(command.command)} behind approval of ${held}, service ${baseUrl}`);
