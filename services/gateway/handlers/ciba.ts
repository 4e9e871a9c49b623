import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  AuthorizationDetails,
  BackchannelAuthenticationForm,
  BindingMessage,
  type ClientCredentials,
  ClientNotificationToken,
  cibaActionOf,
  cibaEndpoints,
  cibaLimits,
  describeZodError,
  Metadata,
  RequestedExpiry,
  tooDeepPath,
} from '@agent-auth/contracts';
import { errors, isAppError } from '@agent-auth/errors';
import { z } from 'zod';
import type { Authenticator } from '../adapters/auth.js';
import type { RateLimitStore } from '../store/rate-limits.js';
import { openIdConfiguration } from './ciba-metadata.js';
import { answerAsOAuth, type CibaGrant, clientCredentialsOf, NO_STORE, parseWith } from './oauth.js';
import { publicOriginOf } from './public-origin.js';
import { identityOf, type RateLimitSettings, spendBudget } from './rate-limit.js';

export interface CibaRouteDeps {
  bus: Bus;
  authenticator: Authenticator;
  publicBaseUrl: string | undefined;
  limiter?: RateLimitStore;
  settings: RateLimitSettings;
}

/** A backchannel request is a few hundred bytes, up to 12 kB of authorization_details. */
const CIBA_BODY_LIMIT = 32 * 1024;

/**
 * The client of a CIBA request or grant: an agent, its agent id the client_id and its API key the client secret
 * (client_secret_basic or client_secret_post). The request is counted against the agent's rate limit once it is
 * known, against the address's otherwise; any failure is invalid_client.
 */
async function authenticateClient(
  deps: CibaRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  client: ClientCredentials,
): Promise<AgentPrincipal> {
  let agent: AgentPrincipal | null = null;
  try {
    if (client.client_secret) agent = await deps.authenticator.agent(client.client_secret, request.id);
  } catch (err) {
    if (!isAppError(err) || err.status !== 401) throw err; // the actions service away: 503, not the client's fault
  }
  const known = agent?.agent_id === client.client_id ? agent : null;
  if (deps.limiter) await spendBudget(deps.limiter, deps.settings, identityOf(deps.settings, known, request.ip), reply);
  if (!known)
    throw errors.oauthInvalidClient('The client_id and client_secret (the agent id and its API key) do not match');
  return known;
}

const detailsError = (reason: string) => errors.cibaInvalidAuthorizationDetails(`authorization_details${reason}`);

/** The one `agent_action` entry of a form's authorization_details (invalid_authorization_details otherwise). */
function agentActionOf(text: string | undefined) {
  if (text === undefined) throw detailsError(': is required (a JSON array of one agent_action entry)');
  if (text.length > cibaLimits.authorizationDetailsChars)
    throw detailsError(`: must be at most ${cibaLimits.authorizationDetailsChars} characters of JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw detailsError(': is not JSON');
  }
  const deep = tooDeepPath(parsed);
  if (deep !== null) throw detailsError(`: is nested too deeply at ${deep}`);
  const result = z.object({ authorization_details: AuthorizationDetails }).safeParse({ authorization_details: parsed });
  if (!result.success)
    throw errors.cibaInvalidAuthorizationDetails(
      describeZodError(result.error, 'authorization_details', { authorization_details: parsed }),
    );
  return result.data.authorization_details[0]!;
}

/** An optional form parameter checked against its schema (invalid_request naming it). */
function optional<S extends z.ZodType>(schema: S, value: string | undefined, name: string): z.output<S> | null {
  if (value === undefined) return null;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw errors.invalidRequest(describeZodError(parsed.error, name));
  return parsed.data as z.output<S>;
}

/** The bus message of a backchannel authentication request (CIBA 7.1). */
function cibaRequestOf(agent: AgentPrincipal, form: z.output<typeof BackchannelAuthenticationForm>) {
  if (!(form.scope ?? '').split(' ').includes('openid')) throw errors.cibaInvalidScope();
  if (form.request !== undefined)
    throw errors.invalidRequest('request: signed authentication requests are not supported; send the parameters');
  const bindingMessage = optional(BindingMessage, form.binding_message, 'binding_message');
  const expiry = optional(RequestedExpiry, form.requested_expiry, 'requested_expiry') ?? cibaLimits.defaultExpiry;
  const token = optional(ClientNotificationToken, form.client_notification_token, 'client_notification_token');
  const action = cibaActionOf(agentActionOf(form.authorization_details), bindingMessage, expiry);
  // The binding message travels among the metadata: together they must still fit the metadata's limits.
  const fits = action.metadata === null ? null : Metadata.safeParse(action.metadata);
  if (fits && !fits.success) throw detailsError(`[0].${describeZodError(fits.error, 'metadata')}`);
  return { agent, action, binding_message: bindingMessage, client_notification_token: token };
}

/** The token endpoint's CIBA grant (`grant_type=urn:openid:params:grant-type:ciba`, CIBA 10.1). */
export function cibaTokenGrant(deps: CibaRouteDeps): CibaGrant {
  return async (request, reply, { form, client }) => {
    const agent = await authenticateClient(deps, request, reply, client);
    if (!form.auth_req_id) throw errors.invalidRequest('auth_req_id: is required');
    const tokens = await deps.bus.request(
      cibaEndpoints.token,
      { agent, auth_req_id: form.auth_req_id, issuer: publicOriginOf(request, deps.publicBaseUrl) },
      { requestId: request.id },
    );
    return reply.headers(NO_STORE).send(tokens);
  };
}

/**
 * OpenID Connect CIBA: the provider's configuration (`/.well-known/openid-configuration`, outside every rate limit)
 * and the backchannel authentication endpoint (`POST /oauth/bc-authorize`). Errors answer `{error,
 * error_description}` as the OAuth endpoints' do.
 */
export async function cibaRoutes(app: FastifyInstance, deps: CibaRouteDeps): Promise<void> {
  await app.register(async (ciba) => {
    answerAsOAuth(ciba, { bodyLimit: CIBA_BODY_LIMIT, headers: NO_STORE });

    ciba.get('/.well-known/openid-configuration', async (request, reply) =>
      reply
        .headers({ 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' })
        .send(openIdConfiguration(publicOriginOf(request, deps.publicBaseUrl))),
    );

    ciba.post('/oauth/bc-authorize', { bodyLimit: CIBA_BODY_LIMIT }, async (request, reply) => {
      const form = parseWith(BackchannelAuthenticationForm, request.body, 'form');
      const agent = await authenticateClient(deps, request, reply, clientCredentialsOf(request, form));
      const answer = await deps.bus.request(cibaEndpoints.authorize, cibaRequestOf(agent, form), {
        requestId: request.id,
      });
      return reply.headers(NO_STORE).send(answer);
    });
  });
}
