import { actionsEndpoints, identityRevoked, type AgentPrincipal, type DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Bus } from '@agent-auth/bus';
import { createAuthCache } from './auth-cache.js';

export type AuthKind = 'agent' | 'device' | 'none';

/**
 * Runs one lookup per key at a time: callers that miss the cache while a lookup of the same key is under way wait for
 * it. A key's first burst of requests (a new gateway, an expired entry) would otherwise verify the key's argon2 hash
 * once per request, each tens of milliseconds of the actions service's CPU.
 */
function coalesced<P>(lookup: (key: string, requestId: string) => Promise<P>) {
  const inFlight = new Map<string, Promise<P>>();
  return (key: string, requestId: string): Promise<P> => {
    let pending = inFlight.get(key);
    if (!pending) {
      pending = lookup(key, requestId).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
}

/** Turns X-API-Key / X-Device-Id headers into principals, asking the actions service on a cache miss. */
export function createAuthenticator(bus: Bus, options: { ttlMs: number }) {
  const agents = createAuthCache<AgentPrincipal>({ ttlMs: options.ttlMs, maxEntries: 50_000 });
  const devices = createAuthCache<DevicePrincipal>({ ttlMs: options.ttlMs, maxEntries: 50_000 });
  const unsubscribe = bus.subscribe(identityRevoked, (event) => {
    if (event.agent_id) agents.evict((p) => p.agent_id === event.agent_id);
    if (event.device_ref) devices.evict((p) => p.device_ref === event.device_ref);
  });
  const lookUpAgent = coalesced(async (apiKey, requestId) => {
    const principal = await bus.request(actionsEndpoints.authenticateAgent, { api_key: apiKey }, { requestId });
    agents.set(apiKey, principal);
    return principal;
  });
  const lookUpDevice = coalesced(async (deviceId, requestId) => {
    const principal = await bus.request(actionsEndpoints.authenticateDevice, { device_id: deviceId }, { requestId });
    devices.set(deviceId, principal);
    return principal;
  });

  return {
    async agent(apiKey: string | undefined, requestId: string): Promise<AgentPrincipal> {
      if (!apiKey) throw errors.apiKeyMissing();
      if (!apiKey.startsWith('aa_') || apiKey.length > 200) throw errors.apiKeyInvalid();
      return agents.get(apiKey) ?? lookUpAgent(apiKey, requestId);
    },
    async device(deviceId: string | undefined, requestId: string): Promise<DevicePrincipal> {
      if (!deviceId) throw errors.deviceIdMissing();
      if (!deviceId.startsWith('dev_') || deviceId.length > 200) throw errors.deviceIdInvalid();
      return devices.get(deviceId) ?? lookUpDevice(deviceId, requestId);
    },
    close: unsubscribe,
  };
}
export type Authenticator = ReturnType<typeof createAuthenticator>;
