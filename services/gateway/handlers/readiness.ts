import type { FastifyInstance } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import { errors } from '@agent-auth/errors';
import {
  actionsEndpoints,
  identityEndpoints,
  notifierEndpoints,
  policyEndpoints,
  vaultEndpoints,
  type EndpointDef,
} from '@agent-auth/contracts';

// Requests cannot be created or decided without actions and policy: the gateway is not ready without them. The vault
// executor, the notifier and identity serve parts that can wait (executions, webhooks are durable; /mcp takes API keys
// without identity, only OAuth needs it), so they are reported only.
const REQUIRED: Record<string, EndpointDef> = { actions: actionsEndpoints.health, policy: policyEndpoints.health };
const REPORTED: Record<string, EndpointDef> = {
  vault: vaultEndpoints.health,
  notifier: notifierEndpoints.health,
  identity: identityEndpoints.health,
};
const TIMEOUT_MS = 2000;

/** GET /healthz (the process serves HTTP) and GET /readyz (the services behind it answer, each named). */
export function readinessRoutes(app: FastifyInstance, bus: Bus): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    const probe = async ([name, endpoint]: [string, EndpointDef]) => {
      try {
        // A service with no replica is reported at once, not waited for: a probe has its own short time-out.
        await bus.request(endpoint, {}, { requestId: request.id, timeoutMs: TIMEOUT_MS, replicaWaitMs: 0 });
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, `unavailable: ${(err as Error).message}`] as const;
      }
    };
    const required = await Promise.all(Object.entries(REQUIRED).map(probe));
    const reported = await Promise.all(Object.entries(REPORTED).map(probe));
    const services = Object.fromEntries([...required, ...reported]);
    const missing = required.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (missing.length) {
      const refusal = errors.notReady(missing);
      return reply.status(refusal.status).send({ ...refusal.toBody(), services });
    }
    return { status: 'ready', services };
  });
}
