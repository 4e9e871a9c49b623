import { AgentAuthClient } from '@agent-auth/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { type CallerOf, registerTools } from './tools.js';

export interface ServerOptions {
  apiKey: string;
  /** Base URL ending in /api/v1. */
  baseUrl: string;
  /** Poll interval of the waiting tools against a service without held waits; 2000 ms by default. */
  pollIntervalMs?: number;
}

export const SERVER_NAME = 'agent-auth';
export const SERVER_VERSION = '0.1.0';

// One JSON Schema validator for every server of the process: each builds its own otherwise, an Ajv instance with its
// formats (15 ms), while a server is made per HTTP request of /mcp.
let validator: AjvJsonSchemaValidator | undefined;
const sharedValidator = () => {
  validator ??= new AjvJsonSchemaValidator();
  return validator;
};

/**
 * The MCP server with the agent-auth tools acting for the call's caller: one fixed client (stdio: over HTTP; a
 * request of the gateway's: in process), or each call's own on a server shared by callers.
 */
export function createToolServer(callerOf: CallerOf): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      // Log levels are accepted (logging/setLevel); the tools report through their results and progress.
      capabilities: { logging: {} },
      jsonSchemaValidator: sharedValidator(),
      instructions:
        'Ask a human for approval before consequential actions (payments, messages, legal, data, public posts, infrastructure): request_approval, then wait_for_approval; proceed only when approved.',
    },
  );
  registerTools(server, callerOf);
  return server;
}

/** Builds the MCP server with the agent-auth tools; connect it to a transport to serve. */
export function createServer(options: ServerOptions): McpServer {
  const client = new AgentAuthClient({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  const caller = { client, baseUrl: options.baseUrl, pollIntervalMs: options.pollIntervalMs };
  return createToolServer(() => caller);
}
