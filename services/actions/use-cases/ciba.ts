import { randomBytes } from 'node:crypto';
import type { RequestContext } from '@agent-auth/bus';
import {
  type ActionView,
  type AgentPrincipal,
  type BackchannelAuthenticationAnswer,
  type CibaClientView,
  type CibaPing,
  type CibaTokenAnswer,
  type CibaTokenRequest,
  cibaLimits,
  cibaPingTargetOf,
  type DevicePrincipal,
  type NewCibaRequest,
  newId,
  type SetCibaClientRequest,
} from '@agent-auth/contracts';
import { errors, isAppError } from '@agent-auth/errors';
import {
  accessTokenClaims,
  approvedDetailOf,
  CIBA_TOKEN_TTL_SECONDS,
  checkApproved,
  checkNotificationEndpoint,
  idTokenClaims,
} from '../domain/ciba.js';
import type { CibaClientRow, CibaStore } from '../store/ciba.js';
import type { ActionsDeps } from './deps.js';
import type { createActionCreation } from './create-action.js';
import type { createActionReading } from './read-actions.js';

type Deps = Pick<ActionsDeps, 'keyring' | 'receiptKeys' | 'settings' | 'log'> & {
  ciba: CibaStore;
  create: ReturnType<typeof createActionCreation>;
  reading: ReturnType<typeof createActionReading>;
};

/** One CIBA request in this many prunes the requests a day past their expiry: no worker of its own needed. */
const PRUNE_ONE_IN = 64;
const PRUNE_BATCH = 500;

const tokenContext = (authReqId: string) => `ciba:${authReqId}:notification_token`;

function clientViewOf(row: CibaClientRow): CibaClientView {
  return {
    client_id: row.agent_id,
    name: row.name,
    token_endpoint_auth_methods: ['client_secret_basic', 'client_secret_post'],
    backchannel_token_delivery_modes: row.notification_endpoint ? ['poll', 'ping'] : ['poll'],
    backchannel_client_notification_endpoint: row.notification_endpoint,
  };
}

/**
 * OpenID Connect CIBA: an agent's backchannel authentication request becomes an ordinary action request (rules,
 * limits and grants first, then the holder); its client polls, or is pinged, and exchanges the auth_req_id for an
 * ID token and an access token signed with the receipt key, so both verify against /.well-known/jwks.json.
 */
export function createCiba(deps: Deps) {
  const { ciba, keyring, receiptKeys } = deps;

  /** The ping target of a ping-mode request: the agent's registered endpoint (invalid_request without one). */
  const pingTarget = async (agent: AgentPrincipal): Promise<string> => {
    const client = await ciba.client(agent.account_id, agent.agent_id);
    if (!client?.notification_endpoint)
      throw errors.invalidRequest(
        'client_notification_token: this client has no backchannel_client_notification_endpoint (its holder sets ' +
          'one on the device app); poll instead, without client_notification_token',
      );
    return cibaPingTargetOf(client.notification_endpoint);
  };

  const prune = (): void => {
    if (Math.random() * PRUNE_ONE_IN >= 1) return;
    void ciba.prune(PRUNE_BATCH).catch((err: unknown) => deps.log.warn({ err }, 'CIBA request pruning failed'));
  };

  /** The request of an auth_req_id, as the client may see it: invalid_grant when it is gone. */
  const actionOf = async (agent: AgentPrincipal, actionId: string): Promise<ActionView> => {
    try {
      return await deps.reading.get(agent, actionId);
    } catch (err) {
      if (isAppError(err) && err.status === 404)
        throw errors.oauthInvalidGrant('auth_req_id: its request is no longer kept');
      throw err;
    }
  };

  const tokensOf = (req: CibaTokenRequest, action: ActionView): CibaTokenAnswer => {
    const facts = {
      issuer: req.issuer,
      clientId: req.agent.agent_id,
      subject: req.agent.account_id,
      authReqId: req.auth_req_id,
      action,
      now: Math.floor(Date.now() / 1000),
      jti: randomBytes(16).toString('base64url'),
    };
    const details = [approvedDetailOf(action)];
    const accessToken = receiptKeys.signJwt('at+jwt', accessTokenClaims(facts, details));
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: CIBA_TOKEN_TTL_SECONDS,
      id_token: receiptKeys.signJwt('JWT', idTokenClaims(facts, accessToken)),
      scope: 'openid',
      authorization_details: details,
    };
  };

  return {
    async authorize(req: NewCibaRequest, ctx: RequestContext): Promise<BackchannelAuthenticationAnswer> {
      const { agent } = req;
      const ping = req.client_notification_token !== null;
      const callbackUrl = ping ? await pingTarget(agent) : null;
      const authReqId = randomBytes(32).toString('base64url');
      const actionId = newId('action');
      // Stored before the request, so that a ping of a request a rule settles at once finds it.
      await ciba.insert({
        auth_req_id: authReqId,
        action_id: actionId,
        agent_id: agent.agent_id,
        account_id: agent.account_id,
        mode: ping ? 'ping' : 'poll',
        interval_seconds: cibaLimits.interval,
        notification_token_enc: ping ? keyring.encrypt(req.client_notification_token!, tokenContext(authReqId)) : null,
        expires_in_seconds: req.action.expires_in_seconds,
      });
      try {
        await deps.create(
          { agent, action: { ...req.action, callback_url: callbackUrl }, action_id: actionId, channel: 'ciba' },
          ctx,
        );
      } catch (err) {
        await ciba.remove(authReqId).catch(() => undefined); // left behind, it would only be pruned later
        throw err;
      }
      prune();
      return { auth_req_id: authReqId, expires_in: req.action.expires_in_seconds, interval: cibaLimits.interval };
    },

    /**
     * The CIBA grant: the CIBA errors until the holder approves, then the tokens, once. One write per poll: the
     * issue of the tokens, or (while pending) the poll's time and interval; none for a request that was refused.
     */
    async token(req: CibaTokenRequest): Promise<CibaTokenAnswer> {
      const row = await ciba.find(req.auth_req_id, req.agent.agent_id);
      if (!row) throw errors.oauthInvalidGrant('auth_req_id: is not a request of this client');
      if (row.issued_at) throw errors.oauthInvalidGrant('auth_req_id: its tokens were issued already');
      const action = await actionOf(req.agent, row.action_id);
      if (action.status === 'pending') {
        const polled = await ciba.poll(row.auth_req_id, req.agent.agent_id, cibaLimits.slowDownStep);
        checkApproved(action.status, polled?.too_fast === true, polled?.interval_seconds ?? row.interval_seconds);
      }
      checkApproved(action.status, false, row.interval_seconds);
      if (!(await ciba.markIssued(row.auth_req_id)))
        throw errors.oauthInvalidGrant('auth_req_id: its tokens were issued already');
      return tokensOf(req, action);
    },

    /** What the notifier needs to ping the client of a ping-mode request. */
    async ping(input: { agent_id: string; request_id: string }): Promise<CibaPing> {
      const row = await ciba.pingOf(input.agent_id, input.request_id);
      if (!row?.notification_token_enc) throw errors.actionNotFound(input.request_id);
      return {
        auth_req_id: row.auth_req_id,
        client_notification_token: keyring.decrypt(row.notification_token_enc, tokenContext(row.auth_req_id)),
      };
    },

    async client(device: DevicePrincipal, agentId: string): Promise<CibaClientView> {
      const row = await ciba.client(device.account_id, agentId);
      if (!row) throw errors.agentNotFound(agentId);
      return clientViewOf(row);
    },

    async setClient(req: SetCibaClientRequest): Promise<CibaClientView> {
      const endpoint = req.backchannel_client_notification_endpoint;
      if (endpoint !== null) checkNotificationEndpoint(deps.settings, endpoint);
      const row = await ciba.client(req.device.account_id, req.agent_id);
      if (!row) throw errors.agentNotFound(req.agent_id);
      await ciba.setEndpoint(req.agent_id, endpoint);
      return clientViewOf({ ...row, notification_endpoint: endpoint });
    },
  };
}
export type Ciba = ReturnType<typeof createCiba>;
