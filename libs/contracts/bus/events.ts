import { z } from 'zod';
import { defineEvent } from './envelope.js';

/**
 * Broadcast when an agent key, a device or an OAuth connection (its access tokens) is revoked, so every gateway drops
 * it from its auth cache at once; the identity service also ends the connections of a revoked agent. `member_id`: a
 * member removed (their devices revoked) or given another role, so every gateway drops their devices' principals and
 * reads the role again.
 */
export const identityRevoked = defineEvent(
  'identity_revoked',
  z.object({
    agent_id: z.string().optional(),
    device_ref: z.string().optional(),
    connection_id: z.string().optional(),
    member_id: z.string().optional(),
  }),
);

/** Broadcast after an account's rules or spending limits change, so every policy replica drops its cached copy. */
export const policyChanged = defineEvent('policy_changed', z.object({ account_id: z.string() }));

/** Broadcast after an account's recorded spend changes, so every policy replica drops its copy of the totals. */
export const spendChanged = defineEvent('spend_changed', z.object({ account_id: z.string() }));

/**
 * Broadcast when an MCP client cancels a tool call (notifications/cancelled): the call may be waiting on another
 * gateway replica, which stops it. `request_id` is the JSON-RPC id the client gave the call, `session_id` the
 * client's Mcp-Session-Id ('' without one).
 */
export const mcpCallCancelled = defineEvent(
  'mcp_call_cancelled',
  z.object({ agent_id: z.string(), session_id: z.string(), request_id: z.union([z.string(), z.number()]) }),
);
