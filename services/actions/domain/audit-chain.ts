import { auditEventHash, ZERO_HASH, type AuditEvent } from '@agent-auth/contracts';

/** An audit event as written on the request path, before the sealer gives it its place in the chain. */
export interface UnsealedEvent {
  id: string;
  request_id: string | null;
  event: string;
  actor: string;
  detail: Record<string, unknown>;
  at: Date;
}

/** The last sealed event of an account's chain (seq 0 and the zero hash while the chain is empty). */
export interface ChainHead {
  seq: number;
  hash: string;
}

export const EMPTY_CHAIN: ChainHead = { seq: 0, hash: ZERO_HASH };

/** The public form of an event (GET /audit), from its stored fields and its place in the chain. */
export function publicEvent(row: UnsealedEvent, place: { seq: number; prev_hash: string; hash: string }): AuditEvent {
  return {
    seq: place.seq,
    at: row.at.toISOString(),
    request_id: row.request_id,
    type: row.event,
    actor: row.actor,
    data: row.detail,
    prev_hash: place.prev_hash,
    hash: place.hash,
  };
}

/** Chains events after a head, in the order given: each gets the next seq, the previous hash, and its own hash. */
export function chainAfter(
  head: ChainHead,
  rows: UnsealedEvent[],
): Array<{ id: string; seq: number; prev_hash: string; hash: string }> {
  let { seq, hash } = head;
  return rows.map((row) => {
    const place = { seq: seq + 1, prev_hash: hash, hash: '' };
    const { hash: _unset, ...unhashed } = publicEvent(row, place);
    place.hash = auditEventHash(unhashed);
    seq = place.seq;
    hash = place.hash;
    return { id: row.id, ...place };
  });
}

/**
 * Chains a round's events (in sealing order, several accounts mixed) after each account's head (an account without
 * one starts its chain): each event gets its account's next seq, previous hash and its own hash.
 */
export function chainEach<E extends UnsealedEvent & { account_id: string }>(
  events: E[],
  heads: Map<string, { seq: string | number; hash: string }>,
): Array<{ account_id: string; id: string; seq: number; prev_hash: string; hash: string }> {
  const byAccount = new Map<string, E[]>();
  for (const e of events) {
    const list = byAccount.get(e.account_id);
    if (list) list.push(e);
    else byAccount.set(e.account_id, [e]);
  }
  return [...byAccount].flatMap(([account_id, rows]) => {
    const head = heads.get(account_id);
    const after = head ? { seq: Number(head.seq), hash: head.hash } : EMPTY_CHAIN;
    return chainAfter(after, rows).map((c) => ({ account_id, ...c }));
  });
}
