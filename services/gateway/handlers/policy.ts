import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CreateRuleBody, CreateSpendingLimitBody, policyEndpoints as ep, StoredText } from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Authenticator } from './auth.js';
import { addRoute } from './route.js';

const RuleParams = z.object({ rule_id: StoredText().max(100) });
const LimitParams = z.object({ limit_id: StoredText().max(100) });

/** Rules and spending limits (device, SPEC 4.9) and the agent's spending summary (SPEC 4.4). */
export function policyRoutes(app: FastifyInstance, bus: Bus, auth: Authenticator): void {
  addRoute(app, auth, {
    method: 'POST', url: '/rules', auth: 'device', body: CreateRuleBody, response: ep.createRule.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createRule, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/rules', auth: 'device', response: ep.listRules.response,
    handler: ({ principal, requestId }) => bus.request(ep.listRules, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'DELETE', url: '/rules/:rule_id', auth: 'device', params: RuleParams, response: ep.deleteRule.response,
    handler: ({ principal, params, requestId }) => bus.request(ep.deleteRule, { device: principal, rule_id: params.rule_id }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/spending-limits', auth: 'device', body: CreateSpendingLimitBody, response: ep.createLimit.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createLimit, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/spending-limits', auth: 'device', response: ep.listLimits.response,
    handler: ({ principal, requestId }) => bus.request(ep.listLimits, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'DELETE', url: '/spending-limits/:limit_id', auth: 'device', params: LimitParams, response: ep.deleteLimit.response,
    handler: ({ principal, params, requestId }) => bus.request(ep.deleteLimit, { device: principal, limit_id: params.limit_id }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/agent/spending-summary', auth: 'agent', response: ep.spendingSummary.response,
    handler: ({ principal, requestId }) => bus.request(ep.spendingSummary, { agent: principal }, { requestId }),
  });
}
