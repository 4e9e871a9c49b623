import type { ActionsDeps } from './deps.js';
import { sealWrittenBefore } from './audit-chain.js';

/** What one retention pass did to the audit trail. */
export interface AuditCut {
  /** The months dropped (their partitions' suffix: m2026_01, older). */
  dropped: string[];
  /** Checkpoints stored (one per account that had events in a dropped month). */
  checkpoints: number;
  /** Months due but kept this time: an event of theirs was not sealed yet. */
  held: string[];
}

/**
 * The audit trail ages out with RETENTION_DAYS: whole months go, oldest first, each only once every event of it is
 * sealed, and with a checkpoint per account signed by the current receipt key (docs/decisions.md "Data that ages
 * out"): the remaining chain verifies from it.
 */
export function createAuditRetention(deps: Pick<ActionsDeps, 'auditChain' | 'auditCuts' | 'receiptKeys'>) {
  const { auditChain, auditCuts, receiptKeys } = deps;
  return {
    async cutOlderThan(days: number): Promise<AuditCut> {
      const cut: AuditCut = { dropped: [], checkpoints: 0, held: [] };
      const due = await auditCuts.due(days);
      if (!due.length) return cut;
      await sealWrittenBefore(auditChain);
      for (const month of due) {
        const outcome = await auditCuts.cut(month, (head) => receiptKeys.signCheckpoint(head));
        if ('held' in outcome) {
          // A later month is not cut over an earlier one kept: the chain is cut at one place.
          cut.held.push(month);
          break;
        }
        cut.dropped.push(month);
        cut.checkpoints += outcome.checkpoints;
      }
      return cut;
    },
  };
}
export type AuditRetention = ReturnType<typeof createAuditRetention>;
