import type { FastifyInstance } from 'fastify';
import {
  actionsEndpoints,
  CreateRuleBody,
  CreateSpendingLimitBody,
  policyEndpoints as ep,
  newRuleOf,
  newSpendingLimitOf,
  RuleParams,
  LimitParams,
  GrantParams,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';
import { policyLanguageRoutes } from './policy-language.js';

/** Rules, Cedar policies and spending limits (device) and the agent's spending summary. */
export function policyRoutes(app: FastifyInstance, bus: Bus): void {
  policyLanguageRoutes(app, bus);
  addRoute(app, {
    method: 'POST',
    url: '/rules',
    tag: 'Policy',
    summary: 'Create a rule',
    description:
      'Adds a rule that approves or denies matching requests at creation (by action type, risk level, ' +
      'agent, amount, and `conditions`: 1–10 `{field, op, value}` that must all hold, on `recipient`, `title`, ' +
      '`currency`, `amount`, `risk_level`, `tool_name`, `metadata.<key>`, `local_hour`, `weekday`); rules are ' +
      'evaluated in creation order and the first match wins, after spending limits. A bad condition is a 400 ' +
      'naming it (`conditions[2].op: …`). `decision: "ask"` leaves a matching request to people; an `ask` or ' +
      '`require_quorum` rule may name `approvers` (member ids or `role:<role>`: only they see and answer it) and ' +
      '`escalate_after_seconds` (5–86400) with `escalate_to` (same form): still pending then, it is handed to ' +
      'those people too, who are notified.',
    auth: 'device',
    body: CreateRuleBody,
    response: ep.createRule.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createRule, newRuleOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/rules',
    tag: 'Policy',
    summary: 'List rules',
    description: "The account's rules in evaluation order.",
    auth: 'device',
    response: ep.listRules.response,
    handler: ({ principal, requestId }) => bus.request(ep.listRules, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/rules/:rule_id',
    tag: 'Policy',
    summary: 'Delete a rule',
    description: 'Removes a rule at once. 404 for a rule of another account.',
    auth: 'device',
    params: RuleParams,
    response: ep.deleteRule.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deleteRule, { device: principal, rule_id: params.rule_id }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/spending-limits',
    tag: 'Policy',
    summary: 'Create a spending limit',
    description:
      'A daily, weekly or monthly cap on approved amounts (in USD); a request that would pass it' +
      ' is denied, whatever the rules say.',
    auth: 'device',
    body: CreateSpendingLimitBody,
    response: ep.createLimit.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.createLimit, newSpendingLimitOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/spending-limits',
    tag: 'Policy',
    summary: 'List spending limits',
    description: "The account's spending limits with what is spent in the current window.",
    auth: 'device',
    response: ep.listLimits.response,
    handler: ({ principal, requestId }) => bus.request(ep.listLimits, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/spending-limits/:limit_id',
    tag: 'Policy',
    summary: 'Delete a spending limit',
    description: 'Removes a limit at once. 404 for a limit of another account.',
    auth: 'device',
    params: LimitParams,
    response: ep.deleteLimit.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deleteLimit, { device: principal, limit_id: params.limit_id }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/grants',
    tag: 'Policy',
    summary: 'List standing grants',
    description:
      "The account's standing grants, newest first: live ones and those that ended in the last 30 " +
      'days. Each is scoped to an agent, action type, recipient (null: requests without one) and currency; ' +
      '`max_amount` and `spent` are in dollars of that currency, `created_from` is the request whose approval ' +
      'made it.',
    auth: 'device',
    response: ep.listGrants.response,
    handler: ({ principal, requestId }) => bus.request(ep.listGrants, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/grants/:grant_id',
    tag: 'Policy',
    summary: 'Revoke a standing grant',
    description:
      'Revokes a grant at once: no request created after this answer is approved by it. Answers the grant with ' +
      '`revoked_at` set (revoking again changes nothing). 404 for a grant of another account.',
    auth: 'device',
    params: GrantParams,
    response: actionsEndpoints.revokeGrant.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(actionsEndpoints.revokeGrant, { device: principal, grant_id: params.grant_id }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/agent/spending-summary',
    tag: 'Policy',
    summary: 'Spending summary',
    description: 'For the calling agent: spend, remaining and utilization of each limit that applies to it.',
    auth: 'agent',
    response: ep.spendingSummary.response,
    handler: ({ principal, requestId }) => bus.request(ep.spendingSummary, { agent: principal }, { requestId }),
  });
}
