import {
  actionsEndpoints,
  type AgentPrincipal,
  type DevicePrincipal,
  identityEndpoints,
  identityRevoked,
  type TokenPrincipal,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Bus } from '@agent-auth/bus';
import { createAuthCache } from './auth-cache.js';

export type AuthKind = 'agent' | 'device' | 'none';

/**
 * Turns X-API-Key / X-Device-Id headers and OAuth access tokens into principals, asking the actions service (keys,
 * devices) or the identity service (tokens) on a cache miss.
 */
export function createAuthenticator(bus: Bus, options: { ttlMs: number }) {
  const agents = createAuthCache<AgentPrincipal>({ ttlMs: options.ttlMs, maxEntries: 50_000 });
  const devices = createAuthCache<DevicePrincipal>({ ttlMs: options.ttlMs, maxEntries: 50_000 });
  const tokens = createAuthCache<TokenPrincipal>({ ttlMs: options.ttlMs, maxEntries: 50_000 });
  const unsubscribe = bus.subscribe(identityRevoked, (event) => {
    if (event.agent_id) agents.evict((p) => p.agent_id === event.agent_id);
    if (event.agent_id) tokens.evict((p) => p.agent_id === event.agent_id);
    if (event.device_ref) devices.evict((p) => p.device_ref === event.device_ref);
    // A member removed, or given another role: their devices are verified again (refused, or with the new role).
    if (event.member_id) devices.evict((p) => p.member_id === event.member_id);
    if (event.connection_id) tokens.evict((p) => p.connection_id === event.connection_id);
  });
  return {
    async agent(apiKey: string | undefined, requestId: string): Promise<AgentPrincipal> {
      if (!apiKey) throw errors.apiKeyMissing();
      if (!apiKey.startsWith('aa_') || apiKey.length > 200) throw errors.apiKeyInvalid();
      const verify = () => bus.request(actionsEndpoints.authenticateAgent, { api_key: apiKey }, { requestId });
      return agents.getRenewing(apiKey, verify) ?? agents.lookUp(apiKey, verify);
    },
    async device(deviceId: string | undefined, requestId: string): Promise<DevicePrincipal> {
      if (!deviceId) throw errors.deviceIdMissing();
      if (!deviceId.startsWith('dev_') || deviceId.length > 200) throw errors.deviceIdInvalid();
      const verify = () => bus.request(actionsEndpoints.authenticateDevice, { device_id: deviceId }, { requestId });
      return devices.getRenewing(deviceId, verify) ?? devices.lookUp(deviceId, verify);
    },
    /** An OAuth access token's principal; an expired one is refused whatever the cache remembers. */
    async accessToken(token: string, requestId: string): Promise<TokenPrincipal> {
      if (!token.startsWith('aat_') || token.length > 200) throw errors.accessTokenInvalid();
      const verify = () => bus.request(identityEndpoints.authenticateToken, { access_token: token }, { requestId });
      const principal = tokens.getRenewing(token, verify) ?? (await tokens.lookUp(token, verify));
      if (Date.parse(principal.expires_at) <= Date.now()) throw errors.accessTokenExpired();
      return principal;
    },
    close: unsubscribe,
  };
}
export type Authenticator = ReturnType<typeof createAuthenticator>;
