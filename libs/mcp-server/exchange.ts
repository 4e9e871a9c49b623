// What serving one POST of /mcp takes: the HTTP exchange, the caller's client, and how its calls hear a cancellation.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentAuthClient } from '@agent-auth/client';
import type { SharedToolServer } from './json-exchange.js';

export interface McpExchange {
  request: IncomingMessage;
  response: ServerResponse;
  /** The POST body, parsed from JSON. */
  body: unknown;
  /** The client the tools act through, as the caller's agent. */
  client: AgentAuthClient;
  /** The API's public base URL (ending in /api/v1), for the approval links the tools give. */
  baseUrl: string;
  /** Tells when the client cancelled the calls of this request. */
  cancellation?: Cancellation;
  /**
   * DNS rebinding protection (the transport's own): the Host names the service answers to, when it knows them, and
   * the browser origins allowed to call it; a request naming another is refused (403).
   */
  allowedHosts?: string[];
  allowedOrigins?: string[];
  pollIntervalMs?: number;
  /** The process's shared server (json-exchange.ts), for a POST of one tool call answered with JSON. */
  shared?: SharedToolServer;
}

/**
 * How a POST's calls hear that the client cancelled them: its notifications/cancelled come in POSTs of their own,
 * which may reach another replica.
 */
export interface Cancellation {
  readonly cancelled: boolean;
  /** Calls `listener` once the calls are cancelled; answers what stops listening. */
  onCancel(listener: () => void): () => void;
}
