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
  /**
   * Opens the metadata when it is first read, for a request whose metadata is sealed (a replay of stored requests
   * opens only those a rule or policy reads); `metadata` is then set. Read it through metadataOf.
   */
  openMetadata?: () => MetadataScalars | undefined;
  /** The tool a hook or MCP request calls (its metadata's `tool_name`). */
  tool_name?: string | null;
}

/** The request's metadata scalars, opened on first read when they are sealed. */
export function metadataOf(facts: RequestFacts): MetadataScalars | undefined {
  if (facts.openMetadata) {
    facts.metadata = facts.openMetadata();
    facts.openMetadata = undefined;
  }
  return facts.metadata;
}

/** The request's tool: its metadata's `tool_name`, else the one the question named. */
export function toolNameOf(facts: RequestFacts): string | null {
  const named = metadataOf(facts)?.tool_name;
  if (typeof named === 'string' && named.length > 0) return named;
  return facts.tool_name ?? null;
}
