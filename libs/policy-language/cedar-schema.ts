import { actionTypes } from '@agent-auth/contracts';

/**
 * The Cedar schema policies are written and validated against (GET /policies/schema). The principal is the agent
 * (`Agent::"agt_…"`), the action the request's action type (`Action::"purchase"`), the resource the request
 * (`Request::"act_…"`); the context holds the rest. A request's top-level metadata values are the tags of its
 * `Metadata` (numbers and booleans as their JSON text): `context.metadata.hasTag("source") &&
 * context.metadata.getTag("source") == "mcp"`.
 */
export const CEDAR_SCHEMA = `// The agent that asks.
entity Agent;
// The action request itself.
entity Request;
// The request's top-level metadata values, as tags (numbers and booleans as their JSON text).
entity Metadata tags String;

action ${actionTypes.map((t) => `"${t}"`).join(', ')} appliesTo {
  principal: [Agent],
  resource: [Request],
  context: {
    // In cents of the currency; absent when the request has no amount.
    amount_cents?: Long,
    currency: String,
    // low, medium, high or critical.
    risk_level: String,
    reversible: Bool,
    recipient?: String,
    metadata: Metadata,
    // The tool a coding agent's hook or an MCP gate call runs.
    tool_name?: String,
    // The hour (0-23) and day (mon ... sun) on the account's clock (PUT /account/settings {timezone}).
    local_hour: Long,
    weekday: String,
  }
};
`;
