import type { MetadataScalars, RiskLevel } from '@agent-auth/contracts';

/**
 * What rules, their conditions and Cedar policies read of a request: the policy question's fields
 * (libs/contracts DecideRequest) or a stored request's columns with its metadata opened.
 */
export interface RequestFacts {
  action_type: string;
  agent_id: string;
  risk_level: RiskLevel;
  amount_cents: number | null;
  currency: string;
  recipient?: string | null;
  title?: string;
  reversible?: boolean;
  /** The top-level scalar values of the request's metadata (metadataScalarsOf). */
  metadata?: MetadataScalars;
  /** The tool a hook or MCP request calls (its metadata's `tool_name`). */
  tool_name?: string | null;
}

/** The request's tool: its metadata's `tool_name`, else the one the question named. */
export function toolNameOf(facts: RequestFacts): string | null {
  const named = facts.metadata?.tool_name;
  if (typeof named === 'string' && named.length > 0) return named;
  return facts.tool_name ?? null;
}
