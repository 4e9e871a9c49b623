import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

// One registry per process: in all-in-one mode every service records into it and the gateway serves it.
const registry = new Registry();
let enabled = true;
let defaultsCollected = false;

// Latencies from 1 ms to 10 s: the service's answers are milliseconds, the bus time-out is 10 s by default.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Lags from 10 ms to 5 min: the outbox relay is woken at once, the audit chain is sealed within 2 s.
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

const httpDuration = new Histogram({
  name: 'agent_auth_http_request_duration_seconds',
  help: 'HTTP requests served by the gateway, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
const busRequestDuration = new Histogram({
  name: 'agent_auth_bus_request_duration_seconds',
  help: 'Bus requests this process sent, by subject (service.endpoint) and outcome (ok, or the error status)',
  labelNames: ['subject', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
const busHandledDuration = new Histogram({
  name: 'agent_auth_bus_handled_duration_seconds',
  help: 'Bus requests this process served, by subject (service.endpoint) and outcome (ok, or the error status)',
  labelNames: ['subject', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});
const busResends = new Counter({
  name: 'agent_auth_bus_resends_total',
  help:
    'Bus requests this process sent again, by subject (service.endpoint) and reason (silent: a replica taken for ' +
    'dead; no_responders: no replica listened; reconnect: sent before its connection to NATS was lost)',
  labelNames: ['subject', 'reason'] as const,
  registers: [registry],
});
const decisions = new Counter({
  name: 'agent_auth_decisions_total',
  help: 'Decisions on action requests by outcome (approved, denied, pending, expired) and by whom (policy, device, expiry)',
  labelNames: ['outcome', 'by'] as const,
  registers: [registry],
});
const webhookAttempts = new Counter({
  name: 'agent_auth_webhook_attempts_total',
  help: 'Webhook delivery attempts by result (delivered, retrying, failed)',
  labelNames: ['result'] as const,
  registers: [registry],
});
const rateLimitRefusals = new Counter({
  name: 'agent_auth_rate_limit_refusals_total',
  help: 'Requests refused with 429 by the rate limits, by the kind of identity (agent, device, ip)',
  labelNames: ['identity'] as const,
  registers: [registry],
});
const outboxLag = new Histogram({
  name: 'agent_auth_outbox_lag_seconds',
  help: 'Time from an action event being committed to the outbox to its publication on the event stream',
  buckets: LAG_BUCKETS,
  registers: [registry],
});
const eventStreamsOpen = new Gauge({
  name: 'agent_auth_event_streams_open',
  help: 'Server-sent event streams (GET /device/events, GET /agent/events) this process holds open',
  registers: [registry],
});
let sealing: Histogram | undefined;

/**
 * Children of a labelled metric, kept per label combination so the hot path allocates nothing per request: one
 * map level per label value (no key string is built per call).
 */
function childCache<C>(make: (...values: string[]) => C) {
  type Level = Map<string, Level | C>;
  const root: Level = new Map();
  return (...values: string[]): C => {
    let level = root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Level | undefined;
      if (!next) {
        next = new Map();
        level.set(values[i]!, next);
      }
      level = next;
    }
    const last = values[values.length - 1]!;
    let child = level.get(last) as C | undefined;
    if (child === undefined) {
      child = make(...values);
      level.set(last, child);
    }
    return child;
  };
}
const httpChild = childCache((m, r, s) => httpDuration.labels(m!, r!, s!));
const busRequestChild = childCache((s, o) => busRequestDuration.labels(s!, o!));
const busHandledChild = childCache((s, o) => busHandledDuration.labels(s!, o!));

/** Switches recording on or off for this process (METRICS=false: nothing is recorded, nothing is served). */
export function configureMetrics(options: { enabled: boolean }): void {
  enabled = options.enabled;
  if (enabled && !defaultsCollected) {
    defaultsCollected = true;
    collectDefaultMetrics({ register: registry });
  }
}

/** True when this process records and serves metrics. */
export function metricsEnabled(): boolean {
  return enabled;
}

/** The Prometheus text exposition of every metric of this process. */
export async function metricsText(): Promise<string> {
  if (enabled && !defaultsCollected) configureMetrics({ enabled });
  return registry.metrics();
}

/** The Content-Type of metricsText(). */
export const METRICS_CONTENT_TYPE = registry.contentType;

/** Records one HTTP request: `route` is the route pattern (e.g. /api/v1/actions/:id), never the raw URL. */
export function recordHttpRequest(method: string, route: string, statusCode: number, seconds: number): void {
  if (enabled) httpChild(method, route, String(statusCode)).observe(seconds);
}

/** Records one bus request sent by this process; outcome is 'ok' or the error's HTTP status. */
export function recordBusRequest(subject: string, outcome: string, seconds: number): void {
  if (enabled) busRequestChild(subject, outcome).observe(seconds);
}

/** Records one bus request served by this process; outcome is 'ok' or the error's HTTP status. */
export function recordBusHandled(subject: string, outcome: string, seconds: number): void {
  if (enabled) busHandledChild(subject, outcome).observe(seconds);
}

/** Why a bus request was sent again: its replica went silent, no replica listened, or NATS reconnected. */
export type BusResendReason = 'silent' | 'no_responders' | 'reconnect';

/** Counts one bus request sent again by this process (a failover: rare, so no child cache). */
export function recordBusResend(subject: string, reason: BusResendReason): void {
  if (enabled) busResends.inc({ subject, reason });
}

/** Counts decisions on requests: at creation by the policy, by a device, by expiry. */
export function recordDecision(outcome: string, by: 'policy' | 'device' | 'expiry' | 'agent', count = 1): void {
  if (enabled && count > 0) decisions.inc({ outcome, by }, count);
}

/** Counts one webhook attempt by its result. */
export function recordWebhookAttempt(result: 'delivered' | 'retrying' | 'failed'): void {
  if (enabled) webhookAttempts.inc({ result });
}

/** Counts one request refused by a rate limit. */
export function recordRateLimitRefusal(identity: 'agent' | 'device' | 'ip'): void {
  if (enabled) rateLimitRefusals.inc({ identity });
}

/**
 * Counts a server-sent event stream as open until the returned function is called (once, when it ends). Counted
 * even with metrics off, so that switching them on never meets a count gone negative.
 */
export function countEventStream(): () => void {
  eventStreamsOpen.inc();
  let counted = true;
  return () => {
    if (counted) eventStreamsOpen.dec();
    counted = false;
  };
}

/** Records the outbox lag of published events, from the time each was committed. */
export function recordOutboxPublished(committedAt: Date[], now = Date.now()): void {
  if (!enabled) return;
  for (const at of committedAt) outboxLag.observe(Math.max(0, (now - at.getTime()) / 1000));
}

/**
 * A gauge read at scrape time (e.g. the age of the oldest unpublished outbox row); `read` may query the database.
 * Registering the same name twice returns the first gauge.
 */
export function registerScrapeGauge(
  name: string,
  help: string,
  read: () => Promise<number | null> | number | null,
): void {
  if (registry.getSingleMetric(name)) return;
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      // A failed read (the database is away) leaves the last value rather than failing the whole scrape.
      const value = await Promise.resolve()
        .then(read)
        .catch(() => null);
      if (value !== null) this.set(value);
    },
  });
}

/** The outbox backlog gauge (age of the oldest unpublished event), read at scrape time; registered by the relay. */
export function registerOutboxBacklog(read: () => Promise<number>): void {
  registerScrapeGauge(
    'agent_auth_outbox_oldest_unpublished_seconds',
    "Age of the oldest action event not yet published from the outbox (0 when none waits): the relay's backlog",
    read,
  );
}

/** The audit chain's sealing lag (event written → sealed in the chain), registered by the process that seals. */
export function sealingLag(): { observe(seconds: number): void } {
  sealing ??= new Histogram({
    name: 'agent_auth_audit_sealing_lag_seconds',
    help: 'Time from an audit event being written to it being sealed into its account hash chain',
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  const histogram = sealing;
  return { observe: (seconds) => enabled && histogram.observe(seconds) };
}
