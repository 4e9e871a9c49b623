import type { ActionEvent } from '@agent-auth/contracts';

/** A short notice for a device; the device fetches the details itself (GET /pending). */
export interface PushMessage {
  title: string;
  body: string;
  data: Record<string, unknown>;
}

/** The device app's link to one request. */
export function requestLink(id: string): string {
  return `/app/#/requests/${encodeURIComponent(id)}`;
}

function amountText(amount: number | null, currency: string): string | null {
  if (amount === null) return null;
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);
}

const OUTCOME: Record<string, string> = { approved: 'Approved', denied: 'Denied', expired: 'Expired' };

/**
 * What a phone is told of an event, or null when nothing: a new pending request (title, amount, risk; tapping
 * opens it), and the outcome of a request that was pending (the service worker closes that request's notification
 * by its tag). A request decided at creation (a rule, a limit) was never shown, so its outcome is not pushed.
 */
export function pushMessageOf(event: ActionEvent): PushMessage | null {
  const { action } = event;
  const tag = `request:${action.id}`;
  const data = {
    type: event.type,
    request_id: action.id,
    url: requestLink(action.id),
    tag,
    status: action.status,
    risk_level: action.risk_level,
    amount: action.amount,
    currency: action.currency,
    expires_at: action.expires_at,
  };
  if (event.type === 'action.created') {
    if (action.status !== 'pending') return null;
    const parts = [
      amountText(action.amount, action.currency),
      `${action.risk_level} risk`,
      action.action_type.replace('_', ' '),
    ];
    return {
      title: `Approval requested: ${action.title}`.slice(0, 120),
      body: parts.filter(Boolean).join(' · '),
      data,
    };
  }
  if (event.type === 'action.escalated') {
    if (action.status !== 'pending') return null;
    return {
      title: `Escalated to you: ${action.title}`.slice(0, 120),
      body: 'Not answered in time: yours to answer now',
      data,
    };
  }
  if (action.resolved_at === action.created_at) return null;
  const outcome = OUTCOME[action.status] ?? action.status;
  return {
    title: `${outcome}: ${action.title}`.slice(0, 120),
    body: action.resolved_by === 'system' ? 'No one answered in time' : 'Decided',
    data,
  };
}
