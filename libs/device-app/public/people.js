// The account's people in words: what each role may do in the app, names for member ids and role groups, whom a
// request waits for and where it escalates, and who approved a quorum.

/** The account's members by id, as last read: the views name people with it. */
export const membersById = new Map();

export function rememberMembers(members) {
  membersById.clear();
  for (const m of members) membersById.set(m.member_id, m);
}

/** Whether requests name a member not read yet (someone who joined since): the members are read again then. */
export function namesUnknownMember(requests) {
  const known = (id) => !id || id.startsWith('role:') || membersById.has(id);
  return requests.some((r) => {
    const { approvers, escalateTo } = routingOf(r);
    const ids = [...(r.quorum?.approvals ?? []).map((a) => a.member_id), ...(approvers ?? []), ...(escalateTo ?? [])];
    return ids.some((id) => !known(id));
  });
}

/** The roles a member can have, in the order the Team view offers them, with what each may do. */
export const ROLES = [
  ['owner', 'everything'],
  ['admin', 'manages the account'],
  ['approver', 'answers requests'],
  ['auditor', 'reads the audit trail'],
];

const MANAGE = new Set(['owner', 'admin']);
const ANSWER = new Set(['owner', 'admin', 'approver']);
const AUDIT = new Set(['owner', 'admin', 'auditor']);

/**
 * What a role may do in the app, as the service decides it (services/gateway/handlers/device-roles.ts): the app
 * hides what the role may not do instead of running into 403s.
 */
export function abilitiesOf(role) {
  return { manage: MANAGE.has(role), answer: ANSWER.has(role), audit: AUDIT.has(role), owner: role === 'owner' };
}

/** The views a role sees: every member sees Team and This phone. */
export function viewsFor(role) {
  const can = abilitiesOf(role);
  const views = ['team', 'device'];
  if (can.answer) views.push('pending', 'request');
  if (can.audit) views.push('history');
  if (can.manage) views.push('rules', 'limits', 'grants', 'vault', 'agents', 'connect');
  return new Set(views);
}

/** Where a role lands: its pending requests when it answers them, else the history (an auditor). */
export function homeViewOf(role) {
  return abilitiesOf(role).answer ? 'pending' : 'history';
}

const GROUPS = { owner: 'the owners', admin: 'the admins', approver: 'the approvers', auditor: 'the auditors' };

/** A member id or a `role:<role>` group in words: "Dana (approver)", "the admins"; an unknown id as it is. */
export function whoIs(ref, byId) {
  if (ref.startsWith('role:')) return GROUPS[ref.slice(5)] ?? ref;
  const member = byId.get(ref);
  return member ? `${member.name} (${member.role})` : ref;
}

/** "A", "A and B", "A, B and C". */
export function listed(words) {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** "in 4 min", "in 1 h 5 min", "now": how long until an escalation. */
export function inMinutes(at, now = Date.now()) {
  const minutes = Math.ceil((Date.parse(at) - now) / 60_000);
  if (minutes <= 0) return 'now';
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

/** A request's routing, wherever the service puts it (on the request, or under `routing`). */
function routingOf(item) {
  const r = item.routing ?? {};
  return {
    approvers: item.approvers ?? r.approvers ?? null,
    escalateAt: item.escalate_at ?? r.escalate_at ?? null,
    escalateTo: item.escalate_to ?? r.escalate_to ?? null,
    escalatedAt: item.escalated_at ?? r.escalated_at ?? null,
  };
}

/**
 * "Waiting for Dana (approver) — escalates to the owners in 4 min": whom a routed request waits for and when it
 * goes further; null for a request any approver may answer and that does not escalate.
 */
export function waitingLine(item, byId, now = Date.now()) {
  const { approvers, escalateAt, escalateTo, escalatedAt } = routingOf(item);
  if (!approvers?.length && !escalateTo?.length) return null;
  const who = approvers?.length ? listed(approvers.map((a) => whoIs(a, byId))) : 'any approver';
  const parts = [`Waiting for ${who}`];
  if (escalateTo?.length && escalatedAt) parts.push(`escalated to ${listed(escalateTo.map((a) => whoIs(a, byId)))}`);
  else if (escalateTo?.length && escalateAt)
    parts.push(`escalates to ${listed(escalateTo.map((a) => whoIs(a, byId)))} ${inMinutes(escalateAt, now)}`);
  return parts.join(' — ');
}

/** "Asks Dana (approver); after 5 min also the owners": a rule's routing, or null when it names none. */
export function ruleRoutingLine(rule, byId) {
  const parts = [];
  if (rule.approvers?.length) parts.push(`Asks ${listed(rule.approvers.map((a) => whoIs(a, byId)))}`);
  if (rule.escalate_to?.length && rule.escalate_after_seconds) {
    const minutes = Math.max(1, Math.round(rule.escalate_after_seconds / 60));
    const after = rule.escalate_after_seconds < 60 ? `${rule.escalate_after_seconds} s` : `${minutes} min`;
    parts.push(`after ${after} also ${listed(rule.escalate_to.map((a) => whoIs(a, byId)))}`);
  }
  return parts.length ? parts.join('; ') : null;
}

/** Who gave a quorum approval: the member's name (their device as a fallback). */
export function approverOf(approval, byId) {
  const member = approval.member_id ? byId.get(approval.member_id) : undefined;
  return member ? member.name : `Device ${approval.device_id}`;
}

/** The link an invite's QR code carries: the app's join page with the code. */
export function joinLink(origin, code) {
  return `${origin}/app/#/join?code=${encodeURIComponent(code)}`;
}
