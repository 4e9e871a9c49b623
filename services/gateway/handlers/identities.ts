import type { FastifyInstance } from 'fastify';
import {
  actionsEndpoints as ep,
  CreateAgentBody,
  CreateDeviceBody,
  SetPlanBody,
  SetPublicKeyBody,
  AgentParams,
  addDeviceRequestOf,
  newAccountOf,
  newAgentOf,
  setPlanRequestOf,
  setPublicKeyRequestOf,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';

/** Accounts, devices and agents. */
export function identityRoutes(app: FastifyInstance, bus: Bus): void {
  addRoute(app, {
    method: 'POST',
    url: '/accounts',
    tag: 'Accounts',
    summary: 'Create an account',
    description:
      'Creates an account with its first device and first agent. Answers `{account_id, device_id, ' +
      'agent_id, api_key, webhook_secret, plan}`: the device id, API key and webhook secret are shown ' +
      'only in this answer. No authentication; counted against the per-IP rate limit. The body may name' +
      ' the device and give its public key (ECDSA P-256, PEM SPKI or JWK).',
    auth: 'none',
    body: CreateDeviceBody,
    bodyOptional: true,
    response: ep.createAccount.response,
    handler: ({ body, requestId }) => bus.request(ep.createAccount, newAccountOf(body), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/devices',
    tag: 'Accounts',
    summary: 'Add a device',
    description:
      "Adds another device to the calling device's account: `{device_name?, public_key?}`. The new " +
      'device id is shown only in this answer.',
    auth: 'device',
    body: CreateDeviceBody,
    bodyOptional: true,
    response: ep.createDevice.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.createDevice, addDeviceRequestOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/agents',
    tag: 'Agents',
    summary: 'Create an agent',
    description:
      'Creates an agent of the account with its own API key and webhook secret, shown only in this ' + 'answer.',
    auth: 'device',
    body: CreateAgentBody,
    response: ep.createAgent.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.createAgent, newAgentOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/agents',
    tag: 'Agents',
    summary: 'List agents',
    description: "The account's agents, without their keys.",
    auth: 'device',
    response: ep.listAgents.response,
    handler: ({ principal, requestId }) => bus.request(ep.listAgents, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/agents/:agent_id',
    tag: 'Agents',
    summary: 'Revoke an agent',
    description:
      'Deletes an agent and revokes its API key at once, on every gateway. 404 for an agent of another ' + 'account.',
    auth: 'device',
    params: AgentParams,
    response: ep.deleteAgent.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deleteAgent, { device: principal, agent_id: params.agent_id }, { requestId }),
  });
  addRoute(app, {
    method: 'PUT',
    url: '/device/public-key',
    tag: 'Accounts',
    summary: "Set the device's signing key",
    description:
      "Sets or rotates the calling device's public key (ECDSA P-256, PEM SPKI or JWK). From then on " +
      'every approve and deny it sends must be signed (see the API guide, "Signed approvals").',
    auth: 'device',
    body: SetPublicKeyBody,
    response: ep.setPublicKey.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.setPublicKey, setPublicKeyRequestOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/totp/enroll',
    tag: 'Accounts',
    summary: 'Enrol TOTP',
    description:
      'Answers `{secret, otpauth_url}` for an authenticator app, once per account: 409 when TOTP is ' +
      'already configured. Approvals may then carry `totp_code`.',
    auth: 'device',
    response: ep.enrollTotp.response,
    handler: ({ principal, requestId }) => bus.request(ep.enrollTotp, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/account',
    tag: 'Accounts',
    summary: 'Read the account',
    description:
      '`{account_id, member_id, role, plan, actions_this_month, monthly_quota}`: `member_id` and `role` are the ' +
      "calling device's member's; `monthly_quota` is null on the unlimited plan.",
    auth: 'device',
    response: ep.getAccount.response,
    handler: ({ principal, requestId }) => bus.request(ep.getAccount, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/account/plan',
    tag: 'Accounts',
    summary: 'Change the plan',
    description: '`{plan: "free" | "unlimited"}`; takes effect at once and answers like `GET /account`.',
    auth: 'device',
    body: SetPlanBody,
    response: ep.setPlan.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.setPlan, setPlanRequestOf(principal, body), { requestId }),
  });
}
