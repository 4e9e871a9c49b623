/** What a decision knows of a live grant (the replica's copy); its budget and uses are read under the lock. */
export interface GrantScope {
  id: string;
  agent_id: string;
  action_type: string;
  recipient: string | null;
  currency: string;
  expires_at: Date;
}

/** The parts of an action request a grant is scoped to. */
export interface GrantFacts {
  agent_id: string;
  action_type: string;
  recipient?: string | null;
  currency: string;
}

/**
 * Whether a grant covers a request: same agent, action type and currency, and the same recipient. A
 * grant made from a request without a recipient covers only requests without one: it never reaches a payee the
 * holder was not shown.
 */
export function grantCovers(grant: GrantScope, action: GrantFacts, now: Date): boolean {
  return (
    grant.expires_at.getTime() > now.getTime() &&
    grant.agent_id === action.agent_id &&
    grant.action_type === action.action_type &&
    grant.currency === action.currency &&
    grant.recipient === (action.recipient ?? null)
  );
}

/** The grants that may approve the request, soonest to expire first (so the shortest-lived budget is used first). */
export function coveringGrants<G extends GrantScope>(grants: readonly G[], action: GrantFacts, now: Date): G[] {
  return grants
    .filter((g) => grantCovers(g, action, now))
    .sort((a, b) => a.expires_at.getTime() - b.expires_at.getTime());
}
