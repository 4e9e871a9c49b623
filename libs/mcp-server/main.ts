#!/usr/bin/env node
// Entry point of `npx @agent-auth/mcp-server`: serves the tools on stdio. stdout is the MCP channel, so every
// diagnostic goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createServer } from './server.js';

const apiKey = process.env.AGENT_AUTH_API_KEY;
const baseUrl = process.env.AGENT_AUTH_URL;
if (!apiKey || !baseUrl) {
  process.stderr.write(
    'agent-auth-mcp-server: set AGENT_AUTH_API_KEY (aa_...) and AGENT_AUTH_URL (the service base URL ending in /api/v1)\n',
  );
  process.exit(2);
}
const pollIntervalMs = process.env.AGENT_AUTH_POLL_INTERVAL_MS
  ? Number(process.env.AGENT_AUTH_POLL_INTERVAL_MS)
  : undefined;

const server = createServer({ apiKey, baseUrl, pollIntervalMs });
// A failure inside a tool is already a tool error; anything else is logged rather than allowed to kill the session.
process.on('unhandledRejection', (err) =>
  process.stderr.write(`agent-auth-mcp-server: unhandled rejection: ${String(err)}\n`),
);
await server.connect(new StdioServerTransport());
process.stderr.write(`agent-auth-mcp-server: ready on stdio, service ${baseUrl}\n`);
