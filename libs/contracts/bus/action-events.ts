import { z } from 'zod';
import { ActionStatus, ActionType, RiskLevel } from '../enums.js';
import { fromCents } from '../amounts.js';
import { apiTimestamp } from '../timestamps.js';
import { type QuorumApproval, QuorumView } from '../http/actions.js';

/** A timestamp as Postgres writes it into JSON, normalized to the API's ISO 8601 UTC form (toISOString). */
const Timestamp = z.string().transform((s, ctx) => {
  const iso = apiTimestamp(s);
  if (iso === null) {
    ctx.addIssue({ code: 'custom', message: 'is not a timestamp' });
    return z.NEVER;
  }
  return iso;
});

/** `action.escalated`: a pending request was handed to more people (its rule's escalate_to); see `escalation`. */
export const actionEventTypes = ['action.created', 'action.resolved', 'action.escalated'] as const;
export const ActionEventType = z.enum(actionEventTypes);
export type ActionEventType = z.infer<typeof ActionEventType>;

/** What an event says about the request: the webhook fields plus what a device needs to show it. */
export const ActionEventAction = z.object({
  id: z.string(),
  status: ActionStatus,
  action_type: ActionType,
  title: z.string(),
  risk_level: RiskLevel,
  amount: z.number().nullable(),
  currency: z.string(),
  resolved_by: z.string().nullable(),
  resolved_at: Timestamp.nullable(),
  created_at: Timestamp,
  expires_at: Timestamp,
  /** The receipt of a resolution (events written before receipts existed have none). */
  receipt: z
    .string()
    .nullish()
    .transform((r) => r ?? null),
});
export type ActionEventAction = z.infer<typeof ActionEventAction>;

/**
 * The request as the actions service's outbox records it, in the statement that changes it: the stored columns,
 * amount in cents, timestamps as Postgres writes them. `actionOfSnapshot` makes the event's action of it.
 */
export interface ActionSnapshot {
  id: string;
  status: ActionStatus;
  action_type: ActionType;
  title: string;
  risk_level: RiskLevel;
  amount_cents: number | null;
  currency: string;
  resolved_by: string | null;
  resolved_at: string | null;
  created_at: string;
  expires_at: string;
  receipt: string | null;
  /** The decision's details (snapshots written before they were recorded have none). */
  reason?: string | null;
  user_verified?: boolean | null;
  passkey_id?: string | null;
  quorum_required?: number | null;
  quorum_approvals?: QuorumApproval[] | null;
  /** Approved with changes (the edited input itself stays in the request, sealed: only the fact travels). */
  edited?: boolean | null;
  /** On an escalation's snapshot only: whom it went to. */
  escalation?: z.input<typeof EscalationView>;
  /** Who a routed request goes to (its rule's approvers), when its rules named them. */
  approvers?: string[] | null;
}

/** A member an escalation went to, as the notices to them need it. */
export const EscalatedMember = z.object({
  member_id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
});
export type EscalatedMember = z.infer<typeof EscalatedMember>;

/**
 * What an `action.escalated` event adds: when it was due and when it was done (the escalation's lateness), the
 * rule's `escalate_to` as written, and the members that named when it was done (who now see and may answer it).
 */
export const EscalationView = z.object({
  escalate_at: Timestamp,
  escalated_at: Timestamp,
  escalate_to: z.array(z.string()),
  members: z.array(EscalatedMember),
});
export type EscalationView = z.infer<typeof EscalationView>;

/** What an event says about a request, from the outbox's snapshot of it (the amount in major units). */
export function actionOfSnapshot(s: ActionSnapshot): z.input<typeof ActionEventAction> {
  return {
    id: s.id,
    status: s.status,
    action_type: s.action_type,
    title: s.title,
    risk_level: s.risk_level,
    amount: s.amount_cents === null ? null : fromCents(s.amount_cents),
    currency: s.currency,
    resolved_by: s.resolved_by,
    resolved_at: s.resolved_at,
    created_at: s.created_at,
    expires_at: s.expires_at,
    receipt: s.receipt,
  };
}

/**
 * What a resolution decided beyond the event's action (the rest of the agent's action object that leaving pending
 * changes): with it, a gateway answers a held read from the event alone, without reading the request again.
 */
export const ActionEventOutcome = z.object({
  reason: z.string().nullable(),
  user_verified: z.boolean(),
  passkey_id: z.string().nullable(),
  quorum: QuorumView.nullable(),
  /**
   * The holder approved with changes: the edited input is read from the request (it never travels on the stream).
   * Absent on events written before it was recorded: a reader that needs to know reads the request.
   */
  edited: z.boolean().optional(),
});
export type ActionEventOutcome = z.infer<typeof ActionEventOutcome>;

/** The outcome of a resolution's snapshot; undefined for a creation, or a snapshot written before outcomes were. */
export function outcomeOfSnapshot(s: ActionSnapshot): ActionEventOutcome | undefined {
  if (s.status === 'pending' || s.user_verified === undefined) return undefined;
  return {
    reason: s.reason ?? null,
    user_verified: s.user_verified ?? false,
    passkey_id: s.passkey_id ?? null,
    quorum: s.quorum_required
      ? { required: s.quorum_required, approvals: (s.quorum_approvals ?? []) as QuorumApproval[] }
      : null,
    ...(s.edited === undefined || s.edited === null ? {} : { edited: s.edited }),
  };
}

/**
 * An entry of the durable action event stream, written by the actions service's outbox in the same transaction
 * as the change it announces. `id` (msg_…) is the event's identity: the JetStream de-duplication id and the
 * webhook-id of its webhook, the same on every retry.
 */
export const ActionEvent = z.object({
  id: z.string().regex(/^msg_[A-Za-z0-9]+$/),
  type: ActionEventType,
  account_id: z.string(),
  agent_id: z.string(),
  callback_url: z.string().nullable(),
  occurred_at: Timestamp,
  action: ActionEventAction,
  /**
   * On a resolution: what else it decided (absent on older events, and on creations). One that does not parse is
   * dropped, not the event: a reader without it reads the request instead.
   */
  outcome: ActionEventOutcome.optional().catch(undefined),
  /** On an `action.escalated` event: whom the request was handed to. */
  escalation: EscalationView.optional(),
  /**
   * On a creation its rules routed: who it goes to (member ids, `role:<role>`), so that only they are told of it.
   * Absent: every member who may approve.
   */
  approvers: z.array(z.string()).optional(),
});
export type ActionEvent = z.infer<typeof ActionEvent>;
export type ActionEventInput = z.input<typeof ActionEvent>;

/** The NATS subject of an account's action events: `<prefix>.action-events.v1.<account_id>.<type>`. */
export function actionEventSubject(prefix: string, accountId: string, type?: ActionEventType): string {
  return `${prefix}.action-events.v1.${accountId}.${type ?? '>'}`;
}

/** The JetStream stream that keeps a deployment's action events (one per subject prefix). */
export function actionEventStreamName(prefix: string): string {
  return `${prefix}_action_events`;
}

/** The webhook body of a resolution: the fields docs/api-guide.md lists (Webhooks) and the receipt. */
export function webhookPayloadOf(action: ActionEventAction) {
  return {
    id: action.id,
    status: action.status,
    action_type: action.action_type,
    title: action.title,
    risk_level: action.risk_level,
    amount: action.amount,
    resolved_by: action.resolved_by,
    resolved_at: action.resolved_at,
    created_at: action.created_at,
    receipt: action.receipt,
  };
}
