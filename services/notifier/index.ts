import type { Bus } from '@agent-auth/bus';
import type { NotifierSettings } from '@agent-auth/config';
import { notifierEndpoints, vaultEndpoints } from '@agent-auth/contracts';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { createSmtpSender, serviceOutboundClient } from '@agent-auth/outbound';
import { type Mailer, relayedMailer } from './adapters/mailer.js';
import { createEmailStore } from './store/emails.js';
import { createEmails } from './use-cases/emails.js';
import { startEmailLoop } from './workers/email-loop.js';
import { emailHandlers } from './handlers/emails.js';
import { webPushProvider } from './adapters/push.js';
import type { WebhookPoster } from './adapters/webhook-poster.js';
import { actionEventHandler } from './handlers/events.js';
import { pushSubscriptionHandlers } from './handlers/push-subscriptions.js';
import { createDeliveryStore } from './store/deliveries.js';
import { createPushStore } from './store/push-subscriptions.js';
import type { NotifierDeps } from './use-cases/deps.js';
import { createPushSubscriptions } from './use-cases/push-subscriptions.js';
import { startDeliveryLoop } from './workers/delivery-loop.js';
import { startRetention } from './workers/retention.js';

export type { PushProvider } from './adapters/push.js';
export type { WebhookPoster } from './adapters/webhook-poster.js';

/**
 * Email (invites, escalations) when SMTP_URL is set: queued in the notifier's table and sent by a loop of every
 * notifier process, through the vault executor (OUTBOUND_VIA=vault-executor) or this process's own SMTP client.
 * Said once at start whether email is on; the SMTP URL (its password) is never logged.
 */
function startEmail(input: { bus: Bus; sql: Sql; settings: NotifierSettings; log: Logger }) {
  const { bus, sql, settings, log } = input;
  const direct =
    settings.SMTP_URL && settings.OUTBOUND_VIA === 'direct'
      ? createSmtpSender({ url: settings.SMTP_URL, from: settings.EMAIL_FROM })
      : null;
  const mailer: Mailer | null = !settings.SMTP_URL
    ? null
    : direct
      ? (message) => direct.send(message)
      : relayedMailer(bus);
  if (mailer) log.info({ via: settings.OUTBOUND_VIA, from: settings.EMAIL_FROM }, 'email on: invites and escalations');
  else log.info('email off: SMTP_URL is not set');
  const store = createEmailStore(sql);
  let loop: ReturnType<typeof startEmailLoop> | undefined;
  const emails = createEmails({
    emails: store,
    mailer,
    schedule: settings.EMAIL_RETRY_SCHEDULE,
    appOrigin: settings.PUBLIC_BASE_URL ? new URL(settings.PUBLIC_BASE_URL).origin : undefined,
    log: log.child({ component: 'email' }),
    queued: () => loop?.wake(),
  });
  if (mailer) loop = startEmailLoop({ emails, store, pollMs: EMAIL_POLL_MS, log });
  return {
    emails,
    async stop() {
      await loop?.stop();
      direct?.close();
    },
  };
}

/** How often the email loop looks for retries that came due (a new email wakes it at once). */
const EMAIL_POLL_MS = 500;

/** The durable consumer every notifier process joins: they share its events (queue semantics). */
export const NOTIFIER_CONSUMER = 'notifier';
const MAX_RESPONSE_BYTES = 256 * 1024; // a receiver's answer is read and dropped; beyond this the attempt fails
/** A relayed call's bus reply may come this much after the call's own limits (the hop there and back). */
const RELAY_MARGIN_MS = 2_000;

/**
 * Migrates the notifier schema, consumes action events (webhook jobs, push notices), delivers webhooks with
 * retries, and serves the push-subscription endpoints.
 */
export async function startNotifierService(input: {
  bus: Bus;
  sql: Sql;
  settings: NotifierSettings;
  log: Logger;
  poster?: WebhookPoster;
}) {
  const { bus, sql, settings, log } = input;
  // Before the event consumer starts: its jobs are written to these tables.
  await migrate(sql, { schema: 'notifier', dir: `${packageDir(import.meta.url)}/store/migrations`, log });
  // Webhooks and push endpoints are outbound calls to addresses others choose: the SSRF-safe client makes them, in
  // the vault executor unless OUTBOUND_VIA=direct. The receiver has WEBHOOK_TIMEOUT_MS to answer once connected;
  // connecting (TLS included) may take 3 s more.
  const connectTimeoutMs = Math.min(3_000, settings.WEBHOOK_TIMEOUT_MS);
  const poster =
    input.poster ??
    serviceOutboundClient({
      via: settings.OUTBOUND_VIA,
      options: {
        allowInsecureHosts: settings.ALLOW_INSECURE_HOSTS,
        connectTimeoutMs,
        responseTimeoutMs: settings.WEBHOOK_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      },
      relay: (call) =>
        bus.request(vaultEndpoints.relay, call, {
          timeoutMs: connectTimeoutMs + settings.WEBHOOK_TIMEOUT_MS + RELAY_MARGIN_MS,
        }),
    });
  const deps: NotifierDeps = {
    bus,
    settings,
    log,
    poster,
    deliveries: createDeliveryStore(sql),
    pushSubscriptions: createPushStore(sql),
    push: webPushProvider(settings, poster),
  };
  const deliveries = startDeliveryLoop(deps);
  const mail = startEmail({ bus, sql, settings, log });
  const consumer = await bus.actionEvents.consume({
    name: NOTIFIER_CONSUMER,
    handler: actionEventHandler(deps, deliveries, mail.emails),
    concurrency: settings.WEBHOOK_CONCURRENCY,
    log,
    // Without a push provider or email only resolutions matter here (their webhooks): the rest of the stream, a
    // created event for every request, is not delivered to this service at all.
    only: deps.push || mail.emails.enabled ? undefined : 'action.resolved',
  });
  const served = await serveBusService({
    bus,
    sql,
    log,
    name: 'notifier',
    description: 'Webhooks and device notifications',
    health: notifierEndpoints.health,
    handlers: [...pushSubscriptionHandlers(createPushSubscriptions(deps)), ...emailHandlers(mail.emails)],
    concurrency: settings.BUS_CONCURRENCY,
  });
  const retention = startRetention(deps.deliveries, settings.WEBHOOK_RETENTION_DAYS, log);
  log.info({ push: deps.push?.name ?? 'none', retry_schedule: settings.WEBHOOK_RETRY_SCHEDULE }, 'notifier started');
  return {
    async stop() {
      await retention.stop();
      await served.stop();
      await consumer.stop();
      await deliveries.stop();
      await mail.stop();
      if (!input.poster) await poster.close();
    },
  };
}
