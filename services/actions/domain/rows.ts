import type { QuorumApproval } from '@agent-auth/contracts';

/** A row of actions.requests as postgres.js returns it. */
export interface RequestRow {
  id: string;
  account_id: string;
  agent_id: string;
  action_type: string;
  title: string;
  description: string | null;
  risk_level: string;
  risk_rank: number;
  reversible: boolean;
  amount_cents: string | null; // bigint arrives as text
  currency: string;
  recipient: string | null;
  metadata_enc: string | null;
  callback_url: string | null;
  content_hash: string | null;
  status: string;
  rule_applied: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  reason: string | null;
  /** Set when a passkey verified the holder's decision. */
  user_verified?: boolean;
  passkey_id?: string | null;
  spending_limit_exceeded: { period: string; limit: number; spent: number; requested: number } | null;
  created_at: Date;
  expires_at: Date;
  /** SHA-256 of what the holder was shown; null on requests stored before receipts existed. */
  request_hash: string | null;
  /** The policy version the request was decided under at creation. */
  policy_version: string | null;
  /** The signed receipt, written in the statement that resolves the request. */
  receipt: string | null;
  /** Distinct devices that must approve, when a quorum rule matched at creation; else null. */
  quorum_required?: number | null;
  /** The approvals so far under a quorum rule, in the order they came. */
  quorum_approvals?: QuorumApproval[];
  /** Set once, when the vault executor claims an approved vault execution request. */
  execution_started_at?: Date | null;
  /** The attempt that holds that claim (migration 042). */
  execution_claim_id?: string | null;
  /** Approved with changes: the tool input the holder edited, sealed like metadata, and its digest. */
  updated_input_enc?: string | null;
  updated_input_hash?: string | null;
  /** Who may see and answer it (member ids, role:<role>); null: every member who may approve (migration 080). */
  approvers?: string[] | null;
  /** When, still pending, it is handed to `escalate_to` too; null: never. */
  escalate_at?: Date | null;
  escalate_to?: string[] | null;
  /** Set once, when the escalation was done. */
  escalated_at?: Date | null;
  agent_name?: string;
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  key_id: string;
  key_hash: string;
  created_at: Date;
  revoked_at: Date | null;
}

export interface DeviceRow {
  ref: string;
  account_id: string;
  member_id: string;
  name: string | null;
  public_key: string | null;
  created_at: Date;
}

/** A working device with its member's role, as authentication reads it. */
export interface MemberDeviceRow {
  ref: string;
  account_id: string;
  member_id: string;
  role: 'owner' | 'admin' | 'approver' | 'auditor';
}

/** A row of actions.members. */
export interface MemberRow {
  id: string;
  account_id: string;
  name: string;
  email: string | null;
  role: 'owner' | 'admin' | 'approver' | 'auditor';
  created_at: Date;
  removed_at: Date | null;
}

/** A pending request as the device's list reads it: the columns it shows, and its agent's name. */
export type PendingRow = Pick<
  RequestRow,
  | 'id'
  | 'agent_id'
  | 'action_type'
  | 'title'
  | 'description'
  | 'risk_level'
  | 'reversible'
  | 'amount_cents'
  | 'currency'
  | 'recipient'
  | 'metadata_enc'
  | 'content_hash'
  | 'created_at'
  | 'expires_at'
  | 'quorum_required'
  | 'approvers'
  | 'escalate_at'
  | 'escalate_to'
  | 'escalated_at'
> & { agent_name: string };

/** A pending request's place in the list, and what of it can change while it is pending. */
export type PendingHead = Pick<RequestRow, 'id' | 'quorum_approvals' | 'escalated_at'>;

/** A new request as a create stores it: its row but for what the statement sets, and how long it may wait. */
export type NewRequest = Omit<RequestRow, 'resolved_at' | 'created_at' | 'expires_at' | 'agent_name'> & {
  expires_in_seconds: number;
  resolved: boolean;
  /** Its creation time (and resolution time, when resolved at creation), as the receipt states it. */
  at: Date;
};

/** One entry of a request's audit trail, as the statement that changes the request writes it. */
export interface AuditEntry {
  event: string;
  actor: string;
  detail?: Record<string, unknown>;
}
