import {
  type AgentPrincipal,
  type NewAction,
  describeZodError,
  type PolicyDecision,
  requestHash,
  riskRank,
  toCents,
  toolCallContentHash,
  VaultExecutionMetadata,
  vaultContentHash,
} from '@agent-auth/contracts';
import { isInsecureHostAllowed } from '@agent-auth/config';
import { errors } from '@agent-auth/errors';
import type { AuditEntry, NewRequest } from './rows.js';
import { routingColumns } from './routing.js';

/** Checks a callback URL: https, or http only to a host configured as a development exception. */
export function checkCallbackUrl(allowInsecureHosts: { ALLOW_INSECURE_HOSTS: string[] }, url: string): void {
  const parsed = new URL(url);
  if (parsed.protocol === 'https:') return;
  if (isInsecureHostAllowed(allowInsecureHosts, parsed.hostname)) return;
  throw errors.callbackUrlNotHttps();
}

/** The content hash of a vault execution request, or null for any other request (400 when its metadata is bad). */
export function contentHashOf(action: NewAction): string | null {
  const toolCall = toolCallOf(action.metadata);
  if (toolCall) return toolCallContentHash(toolCall);
  if (action.metadata?.vault_execute !== true) return null;
  if (action.action_type !== 'system') throw errors.vaultRequestNotSystem();
  const parsed = VaultExecutionMetadata.safeParse(action.metadata);
  if (!parsed.success) throw errors.invalidRequest(`metadata.${describeZodError(parsed.error, 'metadata')}`);
  return vaultContentHash(parsed.data);
}

/**
 * The tool call a request asks about (a coding agent's hook, the MCP gate): its client, tool and input, which the
 * content hash binds; null for any other request.
 */
function toolCallOf(metadata: Record<string, unknown> | null) {
  if (!metadata || typeof metadata.source !== 'string' || typeof metadata.tool_name !== 'string') return null;
  const input = metadata.tool_input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return null;
  return { source: metadata.source, tool_name: metadata.tool_name, tool_input: input };
}

/** The amount in cents, or null for a request without one (400 for an amount that rounds to nothing). */
export function amountCentsOf(action: NewAction): number | null {
  const cents = action.amount === null ? null : toCents(action.amount);
  if (cents === 0) throw errors.amountTooSmall();
  return cents;
}

/** What the audit keeps of an automatic decision: the rule, or the limit figures that were exceeded. */
function decisionDetail(decision: { rule_applied: string | null; spending_limit_exceeded?: unknown }) {
  return decision.spending_limit_exceeded
    ? { rule_applied: null, spending_limit_exceeded: decision.spending_limit_exceeded }
    : { rule_applied: decision.rule_applied };
}

/** The grant a decision by a standing grant used (resolved_by `grant:{grant_id}`), for its audit entry. */
function grantOf(resolvedBy: string): { grant_id?: string } {
  return resolvedBy.startsWith('grant:') ? { grant_id: resolvedBy.slice('grant:'.length) } : {};
}

/** The parts of a new request decided before it is stored. */
export interface Prepared {
  id: string;
  agent: AgentPrincipal;
  action: NewAction;
  amountCents: number | null;
  contentHash: string | null;
  metadataEnc: string | null;
  /** Its creation time (and resolution time when resolved at creation), as its receipt states it. */
  at: Date;
  /** What the holder is shown, hashed (for its receipt); null while receipts are off. */
  requestHash: string | null;
  /** How the request came in when not over the actions API itself (`ciba`). */
  channel?: string;
}

/** The receipt's request_hash of a new request: its content as stored, metadata included. */
export function requestHashOf(action: NewAction, amountCents: number | null): string {
  return requestHash({
    action_type: action.action_type,
    title: action.title,
    description: action.description,
    risk_level: action.risk_level,
    reversible: action.reversible,
    amount_cents: amountCents,
    currency: action.currency,
    recipient: action.recipient,
    metadata: action.metadata,
  });
}

/** The row of a new request as the policy left it (pending, or resolved by a rule or a limit). */
export function newRequestRow(p: Prepared, decision: PolicyDecision, receipt: string | null): NewRequest {
  const { action, agent } = p;
  const resolved = decision.outcome !== 'pending';
  return {
    id: p.id,
    account_id: agent.account_id,
    agent_id: agent.agent_id,
    action_type: action.action_type,
    title: action.title,
    description: action.description,
    risk_level: action.risk_level,
    risk_rank: riskRank(action.risk_level),
    reversible: action.reversible,
    amount_cents: p.amountCents === null ? null : String(p.amountCents),
    currency: action.currency,
    recipient: action.recipient,
    metadata_enc: p.metadataEnc,
    callback_url: action.callback_url,
    content_hash: p.contentHash,
    status: resolved ? decision.outcome : 'pending',
    // A quorum rule leaves the request pending, naming the rule and how many devices must approve.
    rule_applied: resolved ? decision.rule_applied : (decision.rule_applied ?? null),
    quorum_required: resolved ? null : (decision.quorum ?? null),
    // Who a request left to people goes to, and to whom it escalates when: as the matching rules said now.
    ...routingColumns(resolved ? undefined : decision.routing, p.at),
    resolved_by: resolved ? decision.resolved_by : null,
    reason: null,
    spending_limit_exceeded: resolved ? (decision.spending_limit_exceeded ?? null) : null,
    expires_in_seconds: action.expires_in_seconds,
    resolved,
    at: p.at,
    request_hash: p.requestHash,
    policy_version: p.requestHash === null ? null : decision.policy_version,
    receipt,
  };
}

/** What a resolution's audit entry keeps of its receipt: the receipt itself (it is signed, and holds no secret). */
export function receiptDetail(receipt: string | null): { receipt?: string } {
  return receipt ? { receipt } : {};
}

/** The audit entries of a new request: its creation, and the automatic decision when there was one. */
export function creationAudit(p: Prepared, decision: PolicyDecision, receipt: string | null): AuditEntry[] {
  const { action } = p;
  const created: AuditEntry = {
    event: 'created',
    actor: `agent:${p.agent.agent_id}`,
    // No metadata in the audit trail: request_hash stands for everything the holder was shown, metadata included.
    detail: {
      action_type: action.action_type,
      risk_level: action.risk_level,
      amount_cents: p.amountCents,
      request_hash: p.requestHash,
      ...(p.channel ? { channel: p.channel } : {}),
    },
  };
  if (decision.outcome === 'pending') return [created];
  // The receipt goes into the chain with the decision it proves.
  return [
    created,
    {
      event: decision.outcome,
      actor: decision.resolved_by,
      // A standing grant's use names the grant it counted against.
      detail: { ...decisionDetail(decision), ...grantOf(decision.resolved_by), ...receiptDetail(receipt) },
    },
  ];
}
