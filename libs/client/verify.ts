// Verifying what the service signed, without trusting it: receipts (docs/security.md) and an account's audit chain.
// The hashes are computed here independently of the service's own code; test/e2e/receipts.e2e.test.ts checks both
// agree on real data.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { compactVerify, createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';

// canonicalize ships CommonJS; under NodeNext its default export arrives as the module object.
const canonicalize = ((canonicalizeModule as { default?: unknown }).default ?? canonicalizeModule) as (
  input: unknown,
) => string | undefined;

export const RECEIPT_TYP = 'aa-receipt+jwt';
export const AUDIT_HEAD_TYP = 'aa-audit-head+jws';
export const AUDIT_CHECKPOINT_TYP = 'aa-audit-checkpoint+jws';
const ZERO_HASH = '0'.repeat(64);

/** The claims of a receipt: who resolved which request, how, when, under which policy. */
export interface ReceiptClaims {
  iss: string;
  sub: string;
  iat: number;
  account_id: string;
  agent_id: string;
  status: 'approved' | 'denied' | 'expired';
  resolved_by: string;
  resolved_at: string;
  created_at: string;
  action_type: string;
  amount_cents: number | null;
  currency: string;
  content_hash: string | null;
  request_hash: string | null;
  policy_version: string;
  device_id?: string;
  /** The member the device belongs to: the person who answered. */
  member_id?: string;
  device_signature?: string | null;
}

/** One event of an account's audit chain (GET /audit). */
export interface AuditEvent {
  seq: number;
  at: string;
  request_id: string | null;
  type: string;
  actor: string;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** The signed head of an account's chain (GET /audit/head). */
export interface AuditHead {
  seq: number;
  hash: string;
  at: string | null;
  signature: string;
}

/**
 * Where retention cut the chain (GET /audit's first page carries it): the last dropped event's `{seq, hash, at}`,
 * signed over `{account_id, seq, hash, at}` with typ aa-audit-checkpoint+jws.
 */
export interface AuditCheckpoint {
  seq: number;
  hash: string;
  at: string;
  signature: string;
}

/** A receipt or chain that does not verify; `seq` names the first broken event of a chain. */
export class VerificationError extends Error {
  constructor(
    message: string,
    readonly seq?: number,
  ) {
    super(message);
    this.name = 'VerificationError';
  }
}

/** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of a value. */
export function canonicalSha256(value: unknown): string {
  return createHash('sha256').update(canonicalize(value)!, 'utf8').digest('hex');
}

/** The request_hash of what a holder was shown (as the action object returns it), to compare with a receipt's. */
export function requestHashOf(action: {
  action_type: string;
  title: string;
  description?: string | null;
  risk_level: string;
  reversible: boolean;
  amount_cents?: number | null;
  currency: string;
  recipient?: string | null;
  metadata?: Record<string, unknown> | null;
}): string {
  return canonicalSha256({
    action_type: action.action_type,
    title: action.title,
    description: action.description ?? null,
    risk_level: action.risk_level,
    reversible: action.reversible,
    amount_cents: action.amount_cents ?? null,
    currency: action.currency,
    recipient: action.recipient ?? null,
    metadata: action.metadata ?? {},
  });
}

/** The hash an audit event must carry: SHA-256 of the canonical JSON of the event without its hash. */
export function auditEventHash(event: Omit<AuditEvent, 'hash'>): string {
  const { seq, at, request_id, type, actor, data, prev_hash } = event;
  return canonicalSha256({ seq, at, request_id, type, actor, data, prev_hash });
}

/**
 * Verifies a receipt (compact JWS) against a JSON Web Key Set (the service's /.well-known/jwks.json, live or
 * saved): ES256, typ aa-receipt+jwt, a key of the set. Returns its claims; throws VerificationError otherwise.
 */
export async function verifyReceipt(
  receipt: string,
  jwks: JSONWebKeySet,
  options: { issuer?: string } = {},
): Promise<ReceiptClaims> {
  try {
    const { payload } = await jwtVerify(receipt.trim(), createLocalJWKSet(jwks), {
      algorithms: ['ES256'],
      typ: RECEIPT_TYP,
      issuer: options.issuer,
    });
    return payload as unknown as ReceiptClaims;
  } catch (err) {
    throw new VerificationError(`receipt does not verify: ${(err as Error).message}`);
  }
}

/** What a verified chain proves: the account, how far the head's signature covers, and how many events were checked. */
export interface VerifiedChain {
  account_id: string;
  head_seq: number;
  head_hash: string;
  events: number;
  /** Where the chain was verified from, when it was cut: nothing before it is proved but the signed hash. */
  checkpoint_seq?: number;
}

/**
 * Verifies an account's exported audit chain against its signed head: the head's signature (a receipt key of the
 * set), each event's hash, each prev_hash linking to the event before (64 zeros before seq 1), seqs consecutive,
 * and the event at the head's seq carrying the head's hash. `events` may start after seq 1 (a later page) but
 * must then be consecutive. Where retention cut the chain, pass the `checkpoint` its first page carried: it must be
 * signed for the head's account, the events must start right after it with its hash as their prev_hash, and a head
 * at the checkpoint must carry its hash (one before it cannot be checked). Throws VerificationError naming the first broken event (its `seq`).
 */
export async function verifyAuditChain(
  events: AuditEvent[],
  head: AuditHead,
  jwks: JSONWebKeySet,
  options: { checkpoint?: AuditCheckpoint } = {},
): Promise<VerifiedChain> {
  const signed = await verifySigned(head, jwks, AUDIT_HEAD_TYP, 'audit head');
  const cut = options.checkpoint && (await verifyCheckpoint(options.checkpoint, signed.account_id, jwks));
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  let previous: AuditEvent | undefined;
  for (const event of sorted) {
    if (cut && event.seq <= cut.seq) {
      throw new VerificationError(`event ${event.seq} lies before the checkpoint at event ${cut.seq}`, event.seq);
    }
    const expectedSeq = previous ? previous.seq + 1 : cut && cut.seq + 1;
    if (expectedSeq !== undefined && event.seq !== expectedSeq) {
      throw new VerificationError(
        `event ${expectedSeq} is missing (the export jumps from ${expectedSeq - 1} to ${event.seq})`,
        expectedSeq,
      );
    }
    const expectedPrev = previous ? previous.hash : cut ? cut.hash : event.seq === 1 ? ZERO_HASH : undefined;
    if (expectedPrev !== undefined && event.prev_hash !== expectedPrev) {
      throw new VerificationError(
        `event ${event.seq}: prev_hash does not match the hash of event ${event.seq - 1}`,
        event.seq,
      );
    }
    const { hash, ...rest } = event;
    if (auditEventHash(rest) !== hash)
      throw new VerificationError(`event ${event.seq}: its content does not match its hash`, event.seq);
    if (event.seq === signed.seq && (event.hash !== signed.hash || event.at !== signed.at)) {
      throw new VerificationError(`event ${event.seq}: differs from the signed head`, event.seq);
    }
    previous = event;
  }
  const first = sorted[0]?.seq ?? (cut ? cut.seq + 1 : 1);
  const last = previous?.seq ?? cut?.seq ?? 0;
  if (cut) checkHeadAgainstCut(signed, cut);
  if (signed.seq > last || (!cut && signed.seq > 0 && signed.seq < first)) {
    throw new VerificationError(
      `the signed head is at event ${signed.seq} but the export holds events ${first} to ${last}`,
      last + 1,
    );
  }
  const verified = {
    account_id: signed.account_id,
    head_seq: signed.seq,
    head_hash: signed.hash,
    events: sorted.length,
  };
  return cut ? { ...verified, checkpoint_seq: cut.seq } : verified;
}

/** A head at the cut must carry the checkpoint's hash; one before it cannot be checked at all. */
function checkHeadAgainstCut(head: { seq: number; hash: string }, cut: { seq: number; hash: string }): void {
  if (head.seq < cut.seq) {
    throw new VerificationError(
      `the signed head at event ${head.seq} lies before the checkpoint at event ${cut.seq}: nothing before it can be checked`,
      head.seq,
    );
  }
  if (head.seq === cut.seq && head.hash !== cut.hash)
    throw new VerificationError(`the signed head at event ${head.seq} differs from the checkpoint there`, head.seq);
}

/** Checks a checkpoint's signature, that it was signed for `account_id`, and that its fields are the ones signed. */
async function verifyCheckpoint(checkpoint: AuditCheckpoint, accountId: string, jwks: JSONWebKeySet) {
  const signed = await verifySigned(checkpoint, jwks, AUDIT_CHECKPOINT_TYP, 'audit checkpoint');
  if (signed.account_id !== accountId)
    throw new VerificationError(`the checkpoint was signed for account ${signed.account_id}, not ${accountId}`);
  return { seq: signed.seq, hash: signed.hash };
}

/** Checks a signed head or checkpoint: its signature (typ `typ`), and that its fields are the ones signed. */
async function verifySigned(
  item: { seq: number; hash: string; at: string | null; signature: string },
  jwks: JSONWebKeySet,
  typ: string,
  what: string,
) {
  let signed: { account_id: string; seq: number; hash: string; at: string | null };
  try {
    const { payload, protectedHeader } = await compactVerify(item.signature, createLocalJWKSet(jwks), {
      algorithms: ['ES256'],
    });
    if (protectedHeader.typ !== typ) throw new Error(`typ is not ${typ}`);
    signed = JSON.parse(new TextDecoder().decode(payload));
  } catch (err) {
    throw new VerificationError(`the ${what}'s signature does not verify: ${(err as Error).message}`);
  }
  if (signed.seq !== item.seq || signed.hash !== item.hash || signed.at !== item.at) {
    throw new VerificationError(`the ${what} differs from what its signature covers`);
  }
  return signed;
}
