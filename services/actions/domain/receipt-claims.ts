import type { RequestRow } from './rows.js';

/** Who resolved a request when it was a device: its public reference, its member and the signature it sent (or null). */
export interface DeviceResolution {
  device_id: string;
  /** The member the device belongs to: the person who answered. */
  member_id?: string;
  device_signature: string | null;
  /** Set when a passkey verified the holder. */
  user_verified?: true;
  passkey_id?: string | null;
}

/** The facts of a resolution that the receipt states, beside the stored request. */
export interface Resolution {
  status: 'approved' | 'denied' | 'expired' | 'cancelled';
  resolved_by: string;
  resolved_at: Date;
  device?: DeviceResolution;
  /** Approved with changes: the digest of the tool input the holder edited (content_hash is the one asked). */
  updated_input_hash?: string;
}

type Signed = Pick<
  RequestRow,
  | 'id'
  | 'account_id'
  | 'agent_id'
  | 'action_type'
  | 'amount_cents'
  | 'currency'
  | 'content_hash'
  | 'created_at'
  | 'request_hash'
  | 'policy_version'
>;

/**
 * The claims of a receipt (docs/security.md), exactly: who asked for what (request_hash), who or what resolved it and
 * how, under which policy (policy_version: the rules and limits the policy decided the request under when it was
 * created, resolving it or leaving it to a person; a person's approval or denial and expiry do not consult them),
 * and when. A device's public reference stands in `device_id`: the
 * device id itself is a bearer credential and never leaves the service.
 */
export function receiptClaims(issuer: string, row: Signed, resolution: Resolution): Record<string, unknown> {
  return {
    iss: issuer,
    sub: row.id,
    iat: Math.floor(resolution.resolved_at.getTime() / 1000),
    account_id: row.account_id,
    agent_id: row.agent_id,
    status: resolution.status,
    resolved_by: resolution.resolved_by,
    resolved_at: resolution.resolved_at.toISOString(),
    created_at: row.created_at.toISOString(),
    action_type: row.action_type,
    amount_cents: row.amount_cents === null ? null : Number(row.amount_cents),
    currency: row.currency,
    content_hash: row.content_hash,
    request_hash: row.request_hash,
    policy_version: row.policy_version,
    ...(resolution.device ?? {}),
    ...(resolution.updated_input_hash ? { updated_input_hash: resolution.updated_input_hash } : {}),
  };
}
