import { type AuditEvent, type AuditHead, type AuditPage, ZERO_HASH } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { AuditChainStore } from '../store/audit-chain.js';
import type { ActionsDeps } from './deps.js';

const BATCH = 1000;
// A reader waits for transactions running when it asked for at most about a second (they are single statements and
// end in milliseconds); past that it is answered with the chain as sealed so far.
const READER_ATTEMPTS = 200;
const READER_PAUSE_MS = 5;

/**
 * Seals every event written before the call (going again when another sealer got there first, and waiting for
 * transactions still running then to end: an event of one of them may yet commit below the caller's moment).
 */
export async function sealWrittenBefore(auditChain: AuditChainStore): Promise<void> {
  const asked = BigInt(await auditChain.nextTransaction());
  for (let attempt = 0; attempt < READER_ATTEMPTS; attempt++) {
    const round = await auditChain.seal(BATCH);
    // Full, or another sealer (a replica) moved the cursor first: go again at once.
    if (round.full || round.horizon === null) continue;
    if (BigInt(round.horizon) >= asked) return;
    await new Promise((r) => setTimeout(r, READER_PAUSE_MS));
  }
}

/** Reading an account's audit chain: pages of it, one request's events, and its signed head. */
export function createAuditChain(deps: Pick<ActionsDeps, 'auditChain' | 'requests' | 'receiptKeys'>) {
  const { auditChain, requests, receiptKeys } = deps;
  const sealNow = () => sealWrittenBefore(auditChain);

  return {
    /**
     * GET /audit: the chain after `after`, `limit` events at most; next_after null once nothing is left. Where
     * retention cut the chain, it starts after the checkpoint, and the page that starts there carries it.
     */
    async page(accountId: string, query: { after: number; limit: number }): Promise<AuditPage> {
      await sealNow();
      const cut = await auditChain.checkpoint(accountId);
      const after = Math.max(query.after, cut?.seq ?? 0);
      const events = await auditChain.page(accountId, after, query.limit + 1);
      const more = events.length > query.limit;
      const shown = more ? events.slice(0, query.limit) : events;
      const page = { events: shown, next_after: more ? shown[shown.length - 1]!.seq : null };
      return cut && query.after <= cut.seq ? { ...page, checkpoint: cut } : page;
    },

    /** GET /actions/{id}/audit: the chain's events of one request of the account (404 for any other id). */
    async ofRequest(accountId: string, requestId: string): Promise<{ events: AuditEvent[] }> {
      if (!(await requests.findForAccount(requestId, accountId))) throw errors.actionNotFound(requestId);
      await sealNow();
      return { events: await auditChain.forRequest(accountId, requestId) };
    },

    /**
     * GET /audit/head: the chain's last event, signed by the current receipt key over {account_id, seq, hash, at};
     * the checkpoint's when retention dropped every event up to it.
     */
    async head(accountId: string): Promise<AuditHead> {
      await sealNow();
      const [stored, cut] = await Promise.all([auditChain.head(accountId), auditChain.checkpoint(accountId)]);
      const last = stored && (!cut || stored.seq > cut.seq) ? stored : cut;
      const head = { account_id: accountId, seq: last?.seq ?? 0, hash: last?.hash ?? ZERO_HASH, at: last?.at ?? null };
      return { seq: head.seq, hash: head.hash, at: head.at, signature: await receiptKeys.signHead(head) };
    },

    /** GET /.well-known/jwks.json: every receipt public key. */
    jwks: () => receiptKeys.jwks(),
  };
}
