import type { FastifyInstance } from 'fastify';
import {
  AccountSettingsBody,
  CreatePolicyBody,
  newPolicyOf,
  PolicyParams,
  policyLanguageEndpoints as ep,
  ruleReplayEndpoints,
  SimulateBody,
  setSettingsRequestOf,
  simulateRequestOf,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';

/** Cedar policies, the account's time zone, and replaying or learning rules from the account's history (device). */
export function policyLanguageRoutes(app: FastifyInstance, bus: Bus): void {
  addRoute(app, {
    method: 'POST',
    url: '/policies',
    tag: 'Policy',
    summary: 'Create a Cedar policy',
    description:
      'Stores one Cedar policy (`permit` or `forbid`) under a name, validated against `GET /policies/schema` by ' +
      "Cedar's own validator in strict mode (400 `invalid_policy` with Cedar's message otherwise). Policies are " +
      'consulted after the ordered rules, when no rule matched: a matching `forbid` denies, else a matching ' +
      "`permit` approves (`rule_applied` the policy's name, `resolved_by` `policy:<name>`), else the request waits " +
      'for a person. Spending limits still come first. At most 100 per account.',
    auth: 'device',
    body: CreatePolicyBody,
    response: ep.createPolicy.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.createPolicy, newPolicyOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/policies',
    tag: 'Policy',
    summary: 'List Cedar policies',
    description: "The account's Cedar policies in creation order, each with its name and text.",
    auth: 'device',
    response: ep.listPolicies.response,
    handler: ({ principal, requestId }) => bus.request(ep.listPolicies, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/policies/schema',
    tag: 'Policy',
    summary: 'The Cedar schema',
    description:
      'The schema Cedar policies are validated against, as Cedar schema text and as JSON: principal `Agent`, ' +
      'action `Action::"<action_type>"`, resource `Request`, context `{amount_cents?, currency, risk_level, ' +
      'reversible, recipient?, metadata, tool_name?, local_hour, weekday}`; the metadata values are the tags of ' +
      '`context.metadata` (`context.metadata.hasTag("k") && context.metadata.getTag("k") == "v"`).',
    auth: 'device',
    response: ep.policySchema.response,
    handler: ({ requestId }) => bus.request(ep.policySchema, {}, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/policies/:policy_id',
    tag: 'Policy',
    summary: 'Delete a Cedar policy',
    description: 'Removes a policy at once. 404 for a policy of another account.',
    auth: 'device',
    params: PolicyParams,
    response: ep.deletePolicy.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deletePolicy, { device: principal, policy_id: params.policy_id }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/account/settings',
    tag: 'Accounts',
    summary: 'Read the account settings',
    description: '`{timezone}`: the IANA time zone `local_hour` and `weekday` conditions are read in (default UTC).',
    auth: 'device',
    response: ep.getSettings.response,
    handler: ({ principal, requestId }) => bus.request(ep.getSettings, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'PUT',
    url: '/account/settings',
    tag: 'Accounts',
    summary: 'Change the account settings',
    description:
      '`{timezone}`: an IANA time zone name (`Europe/Paris`, `America/New_York`, `UTC`). Decisions read ' +
      "`local_hour` and `weekday` on it from the next request; it is part of the receipts' `policy_version`.",
    auth: 'device',
    body: AccountSettingsBody,
    response: ep.setSettings.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.setSettings, setSettingsRequestOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/rules/simulate',
    tag: 'Policy',
    summary: 'Replay a draft rule or policy',
    description:
      "`{rule | cedar, days}` (days 1–90, default 30): what the draft, added after today's rules and policies, " +
      "would have decided for the account's requests of those days, and which it decides otherwise than today's " +
      'do: `{evaluated, approve, deny, pending, changed: [{id, title, was, would_be, status}] (newest 50), ' +
      'changed_total}`. Spending limits and grants are left out (they depend on the spend and uses of each moment). ' +
      'Nothing is saved.',
    auth: 'device',
    body: SimulateBody,
    response: ruleReplayEndpoints.simulate.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ruleReplayEndpoints.simulate, simulateRequestOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/rules/suggestions',
    tag: 'Policy',
    summary: 'Rules learned from history',
    description:
      'Drafts of rules the last 30 days imply: requests of one kind (agent, action type, and tool or recipient) a ' +
      'person decided the same way every time, at least 5 times, each with its evidence and its replay. `POST ' +
      "/rules` takes a suggestion's `rule` as it is.",
    auth: 'device',
    response: ruleReplayEndpoints.suggestions.response,
    handler: ({ principal, requestId }) =>
      bus.request(ruleReplayEndpoints.suggestions, { device: principal }, { requestId }),
  });
}
