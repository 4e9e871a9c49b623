import type { RequestRow } from '../domain/rows.js';
import type { ActionsDeps } from './deps.js';
import { recordDecision } from '@agent-auth/metrics';

/** Expiry of pending requests, each with its receipt: lazily when one is read, and in batches by the sweeper. */
export function createExpiry(deps: Pick<ActionsDeps, 'requests' | 'receipts' | 'idempotency' | 'toolCalls'>) {
  const { requests, receipts, idempotency, toolCalls } = deps;

  /** A request that leaves pending by expiry now, with its receipt. */
  const expiryOf = async (row: RequestRow) => {
    const resolvedAt = new Date();
    const receipt = await receipts.sign(row, { status: 'expired', resolved_by: 'system', resolved_at: resolvedAt });
    return { id: row.id, resolved_at: resolvedAt, receipt };
  };

  return {
    /** The row as it is now: a pending request past its expiry is expired first. */
    async current(row: RequestRow): Promise<RequestRow> {
      if (row.status !== 'pending' || row.expires_at.getTime() > Date.now()) return row;
      const expired = await requests.expireIfDue(await expiryOf(row));
      if (expired) recordDecision('expired', 'expiry');
      return expired ?? (await requests.findForAccount(row.id, row.account_id)) ?? row;
    },
    /**
     * Expires up to `batch` overdue requests, each only if still pending (safe beside other replicas and lazy
     * expiry); how many were found overdue and how many this call expired.
     */
    async expireDue(batch: number): Promise<{ found: number; expired: number }> {
      const rows = await requests.overdue(batch);
      if (!rows.length) return { found: 0, expired: 0 };
      const expired = await requests.expireAll(await Promise.all(rows.map(expiryOf)));
      return { found: rows.length, expired: expired.length };
    },
    /** Deletes up to `batch` idempotency keys past their 24 h (older ones are already ignored); how many. */
    pruneKeys: (batch: number) => idempotency.prune(batch),
    /** Forgets up to `batch` hook calls past the ten minutes in which a retry joins them; how many. */
    pruneToolCalls: (batch: number) => toolCalls.prune(batch),
  };
}
export type Expiry = ReturnType<typeof createExpiry>;
