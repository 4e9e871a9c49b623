/**
 * The accounts the policy service said have no rule, limit or live grant: their requests are pending, and this
 * replica answers that itself instead of asking (a bus round trip per create, about a seventh of a create's cost
 * over NATS). An account is dropped on its `policy_changed` event, which every change of rules, limits or grants
 * publishes after it commits; an answer asked for before a change but heard after it is not kept; entries expire
 * after `ttlMs`, which bounds how long an event lost on a broken connection can leave a new rule unheard (as it does
 * the policy replicas' own copies).
 */
export function createNoPolicyAccounts(input: { ttlMs: number; maxAccounts: number; now?: () => number }) {
  const now = input.now ?? Date.now;
  const noted = new Map<string, { at: number; policyVersion: string }>();
  let changes = 0;
  return {
    /** The policy_version of the account's empty policy when it is known to have none, else undefined. */
    emptyPolicyVersion(accountId: string): string | undefined {
      const entry = noted.get(accountId);
      return entry && now() - entry.at < input.ttlMs ? entry.policyVersion : undefined;
    },
    /** Taken before asking the policy service; `note` ignores an answer if any change was heard meanwhile. */
    ticket(): number {
      return changes;
    },
    /** Keeps what the policy service answered: the account has no policy. */
    note(accountId: string, policyVersion: string, ticket: number): void {
      if (ticket !== changes) return;
      noted.delete(accountId);
      noted.set(accountId, { at: now(), policyVersion });
      // Maps keep insertion order: the first key is the one noted longest ago.
      if (noted.size > input.maxAccounts) noted.delete(noted.keys().next().value!);
    },
    /** The account's policy changed. */
    drop(accountId: string): void {
      changes++;
      noted.delete(accountId);
    },
  };
}
export type NoPolicyAccounts = ReturnType<typeof createNoPolicyAccounts>;
