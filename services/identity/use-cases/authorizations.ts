import type { RequestContext } from '@agent-auth/bus';
import type {
  AuthorizationAsked,
  AuthorizationStarted,
  AuthorizationView,
  ConsentDecision,
  DevicePrincipal,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { authorizationProblem, errorRedirect, MCP_SCOPE, redirectWith } from '../domain/authorization-request.js';
import { chooseRedirectUri } from '../domain/redirect-uris.js';
import type { AuthorizationRow } from '../domain/rows.js';
import { newIdentityId, newSecret, secretHash } from '../domain/secrets.js';
import { authorizationViewOf } from '../domain/views.js';
import type { Clients } from './clients.js';
import type { IdentityDeps } from './deps.js';

/** How long the holder has to answer a request on the device app. */
const ANSWER_WITHIN_SECONDS = 600;
/** How long a code lives once given: the client exchanges it at once. */
export const CODE_SECONDS = 60;

/**
 * Authorization requests: a client asks (GET /oauth/authorize), the holder sees who asks on the device app and
 * answers, picking or creating the agent the client will act as; the answer goes back to the client's redirect URI.
 */
export function createAuthorizations(deps: Pick<IdentityDeps, 'authorizations' | 'agents'>, clients: Clients) {
  const { authorizations, agents } = deps;

  /** A request the holder may still answer, or the refusal that says why not. */
  const open = async (id: string): Promise<AuthorizationRow> => {
    const pending = await authorizations.pending(id);
    if (!pending) throw errors.authorizationRequestNotFound();
    if (pending.decided) throw errors.authorizationRequestDecided();
    return pending.row;
  };

  const agentFor = async (decision: ConsentDecision, ctx: RequestContext): Promise<string> => {
    if (decision.agent_id !== null) {
      if (!(await agents.isLive(decision.device, decision.agent_id, ctx)))
        throw errors.agentNotFound(decision.agent_id);
      return decision.agent_id;
    }
    if (decision.agent_name === null) throw errors.invalidRequest('agent_id: give agent_id or agent_name to allow');
    return agents.create(decision.device, decision.agent_name, ctx);
  };

  return {
    async start(asked: AuthorizationAsked): Promise<AuthorizationStarted> {
      if (!asked.client_id) throw errors.invalidRequest('client_id: is required');
      const client = await clients.resolve(asked.client_id);
      const redirectUri = chooseRedirectUri(asked.redirect_uri, client.metadata.redirect_uris);
      if (redirectUri === null)
        throw errors.invalidRequest(
          asked.redirect_uri === null
            ? 'redirect_uri: is required, the client registered several'
            : 'redirect_uri: is not one the client registered',
        );
      const problem = authorizationProblem(asked);
      if (problem)
        return {
          outcome: 'redirect',
          redirect_to: errorRedirect({ redirect_uri: redirectUri, state: asked.state, issuer: asked.issuer }, problem),
        };
      const id = newIdentityId('request');
      await authorizations.insert(
        {
          id,
          client_id: client.client_id,
          redirect_uri: redirectUri,
          redirect_uri_given: asked.redirect_uri !== null,
          code_challenge: asked.code_challenge!,
          state: asked.state,
          scope: MCP_SCOPE,
          resource: asked.resource_served,
          issuer: asked.issuer,
        },
        ANSWER_WITHIN_SECONDS,
      );
      return { outcome: 'consent', request_id: id };
    },

    async view(_device: DevicePrincipal, id: string): Promise<AuthorizationView> {
      const row = await open(id);
      return authorizationViewOf(row, await clients.resolve(row.client_id));
    },

    /** The holder's answer: the redirect that carries it to the client (a code, or access_denied). */
    async decide(decision: ConsentDecision, ctx: RequestContext): Promise<{ redirect_to: string }> {
      const row = await open(decision.request_id);
      const by = decision.device.device_ref;
      if (!decision.allow) {
        if (!(await authorizations.decide(row.id, by, null))) throw errors.authorizationRequestDecided();
        return {
          redirect_to: errorRedirect(row, { code: 'access_denied', detail: 'The account holder denied the request' }),
        };
      }
      const agentId = await agentFor(decision, ctx);
      const code = newSecret('code');
      const answer = {
        account_id: decision.device.account_id,
        agent_id: agentId,
        code_hash: secretHash(code),
        codeSeconds: CODE_SECONDS,
      };
      if (!(await authorizations.decide(row.id, by, answer))) throw errors.authorizationRequestDecided();
      return { redirect_to: redirectWith(row.redirect_uri, { code, state: row.state, iss: row.issuer }) };
    },
  };
}
