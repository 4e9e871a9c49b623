import type { DevicePrincipal, MemberRole } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';

const MANAGE: readonly MemberRole[] = ['owner', 'admin'];
const ANSWER: readonly MemberRole[] = ['owner', 'admin', 'approver'];
const AUDIT: readonly MemberRole[] = ['owner', 'admin', 'auditor'];
const EVERYONE: readonly MemberRole[] = ['owner', 'admin', 'approver', 'auditor'];

/**
 * Which roles may call each device route (docs/security.md, Roles), the one place this is decided: owners and admins
 * manage the account (rules, limits, policies, grants, vault, agents, connected apps, members, settings); approvers
 * answer requests (pending, approve, deny, batches, and the live stream, push and proof of their own device that
 * answering needs); auditors read the audit trail. Every member reads the account and its members and may add a
 * device of their own. Keyed by method and path as the routes are declared, without the API prefix. A device route
 * missing here is refused to every role (and the roles test fails for it).
 */
export const DEVICE_ROUTE_ROLES: Readonly<Record<string, readonly MemberRole[]>> = {
  // The account and its people.
  'GET /account': EVERYONE,
  'POST /account/plan': MANAGE,
  'GET /account/settings': MANAGE,
  'PUT /account/settings': MANAGE,
  'GET /members': EVERYONE,
  'POST /members': MANAGE,
  'PATCH /members/:member_id': MANAGE,
  'DELETE /members/:member_id': MANAGE,
  // A member's own devices and what proves their answers.
  'POST /devices': EVERYONE,
  'PUT /device/public-key': ANSWER,
  'POST /totp/enroll': ANSWER,
  'POST /device/passkeys/options': ANSWER,
  'POST /device/passkeys': ANSWER,
  'GET /device/passkeys': ANSWER,
  'DELETE /device/passkeys/:passkey_id': ANSWER,
  // Answering requests.
  'GET /pending': ANSWER,
  'POST /actions/approve': ANSWER,
  'POST /actions/deny': ANSWER,
  'POST /actions/:request_id/approve': ANSWER,
  'POST /actions/:request_id/deny': ANSWER,
  'GET /device/events': ANSWER,
  'GET /device/push-config': ANSWER,
  'POST /device/push-subscriptions': ANSWER,
  'DELETE /device/push-subscriptions': ANSWER,
  // The audit trail.
  'GET /audit': AUDIT,
  'GET /audit/head': AUDIT,
  'GET /actions/:request_id/audit': AUDIT,
  // Agents and the apps connected as them.
  'POST /agents': MANAGE,
  'GET /agents': MANAGE,
  'DELETE /agents/:agent_id': MANAGE,
  'PATCH /agents/:agent_id': MANAGE,
  'GET /agents/:agent_id/ciba-client': MANAGE,
  'GET /oauth/requests/:request_id': MANAGE,
  'POST /oauth/consent': MANAGE,
  'GET /oauth/connections': MANAGE,
  'DELETE /oauth/connections/:connection_id': MANAGE,
  // What decides without asking: rules, limits, policies, grants; and the vault.
  'POST /rules': MANAGE,
  'GET /rules': MANAGE,
  'DELETE /rules/:rule_id': MANAGE,
  'POST /rules/simulate': MANAGE,
  'GET /rules/suggestions': MANAGE,
  'POST /spending-limits': MANAGE,
  'GET /spending-limits': MANAGE,
  'DELETE /spending-limits/:limit_id': MANAGE,
  'POST /policies': MANAGE,
  'GET /policies': MANAGE,
  'GET /policies/schema': MANAGE,
  'DELETE /policies/:policy_id': MANAGE,
  'GET /grants': MANAGE,
  'DELETE /grants/:grant_id': MANAGE,
  'POST /vault/credentials': MANAGE,
  'GET /vault/credentials': MANAGE,
  'DELETE /vault/credentials/:credential_id': MANAGE,
};

/** A device route as the table keys it: the method (HEAD served as its GET) and the declared path. */
export function deviceRouteKey(method: string, url: string, prefix: string): string {
  const path = url.startsWith(prefix) ? url.slice(prefix.length) : url;
  return `${method === 'HEAD' ? 'GET' : method} ${path}`;
}

/** The roles that may call a route (none for a route the table does not name). */
export function rolesFor(routeKey: string): readonly MemberRole[] {
  return DEVICE_ROUTE_ROLES[routeKey] ?? [];
}

const spoken = (roles: readonly MemberRole[]) =>
  roles.length === 0
    ? 'a role none has (the route is not in the roles table)'
    : `the ${roles.length === 1 ? roles[0] : `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`} role`;

/**
 * Lets a device's call through if its member's role may call the route; else 403 role_forbidden naming the role,
 * what the route does (its summary) and the roles that may.
 */
export function admitRole(principal: DevicePrincipal, route: { key: string; summary?: string }): void {
  const roles = rolesFor(route.key);
  if (roles.includes(principal.role)) return;
  const what = route.summary
    ? `${route.summary.charAt(0).toLowerCase()}${route.summary.slice(1)} (${route.key})`
    : route.key;
  throw errors.roleForbidden(principal.role, what, spoken(roles));
}
