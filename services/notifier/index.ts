import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import { notifierEndpoints, type EndpointDef } from '@agent-auth/contracts';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import { createOutboundClient } from '@agent-auth/outbound';
import { handle } from '@agent-auth/bus';
import { createDeliveryStore } from './store/deliveries.js';
import { createPushStore } from './store/push-subscriptions.js';
import { startDeliveryLoop } from './handlers/delivery-loop.js';
import { actionEventHandler } from './handlers/events.js';
import { webPushProvider } from './handlers/push.js';
import { pushSubscriptionHandlers } from './handlers/push-subscriptions.js';
import type { NotifierDeps } from './handlers/deps.js';
import type { WebhookPoster } from './handlers/webhook-poster.js';

export type { WebhookPoster } from './handlers/webhook-poster.js';
export type { PushProvider } from './handlers/push.js';

const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1_000;

/** Prunes finished deliveries past their retention now and every hour, in batches, logging what went. */
function startRetention(deliveries: ReturnType<typeof createDeliveryStore>, days: number, log: Logger) {
  let stopped = false;
  const prune = async () => {
    const olderThan = new Date(Date.now() - days * 86_400_000);
    let total = 0;
    let pruned: number;
    do {
      pruned = await deliveries.pruneFinished(olderThan, PRUNE_BATCH);
      total += pruned;
    } while (pruned === PRUNE_BATCH && !stopped);
    if (total > 0) log.info({ pruned: total, retention_days: days }, 'finished webhook deliveries pruned');
  };
  const run = () => void prune().catch((err: unknown) => log.warn({ err }, 'pruning webhook deliveries failed'));
  run();
  const timer = setInterval(run, PRUNE_EVERY_MS);
  timer.unref();
  return { stop: () => { stopped = true; clearInterval(timer); } };
}

/** The durable consumer every notifier process joins: they share its events (queue semantics). */
export const NOTIFIER_CONSUMER = 'notifier';
const MAX_RESPONSE_BYTES = 256 * 1024; // a receiver's answer is read and dropped; beyond this the attempt fails

/**
 * Migrates the notifier schema, consumes action events (webhook jobs, push notices), delivers webhooks with
 * retries, and serves the push-subscription endpoints.
 */
export async function startNotifierService(input: { bus: Bus; sql: Sql; config: Config; log: Logger; poster?: WebhookPoster }) {
  const { bus, sql, config, log } = input;
  await migrate(sql, { schema: 'notifier', dir: `${packageDir(import.meta.url)}/store/migrations`, log });
  // Webhooks and push endpoints are outbound calls to addresses others choose: the SSRF-safe client makes them.
  // The receiver has WEBHOOK_TIMEOUT_MS to answer once connected; connecting (TLS included) may take 3 s more.
  const poster =
    input.poster ??
    createOutboundClient({
      allowInsecureHosts: config.ALLOW_INSECURE_HOSTS,
      connectTimeoutMs: Math.min(3_000, config.WEBHOOK_TIMEOUT_MS),
      responseTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  const deps: NotifierDeps = {
    bus, config, log, poster,
    deliveries: createDeliveryStore(sql),
    pushSubscriptions: createPushStore(sql),
    push: webPushProvider(config, poster),
  };
  const deliveries = startDeliveryLoop(deps);
  const consumer = await bus.actionEvents.consume({
    name: NOTIFIER_CONSUMER,
    handler: actionEventHandler(deps, deliveries),
    concurrency: config.WEBHOOK_CONCURRENCY,
    log,
  });
  const health = handle(notifierEndpoints.health as EndpointDef, async () => {
    await sql`select 1`;
    return { ok: true };
  });
  const served = await bus.serve({
    name: 'notifier',
    version: '0.1.0',
    description: 'Webhooks and device notifications',
    handlers: [health, ...pushSubscriptionHandlers(deps)],
    concurrency: config.BUS_CONCURRENCY,
    log,
  });
  const retention = startRetention(deps.deliveries, config.WEBHOOK_RETENTION_DAYS, log);
  log.info({ push: deps.push?.name ?? 'none', retry_schedule: config.WEBHOOK_RETRY_SCHEDULE }, 'notifier started');
  return {
    async stop() {
      retention.stop();
      await served.stop();
      await consumer.stop();
      await deliveries.stop();
      if (!input.poster) await poster.close();
    },
  };
}
