import { z } from 'zod';

const commaList = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  );

// Seconds to wait before each retry, counted from the attempt before it (fractions allowed, for tests).
/** A comma list of seconds between attempts, `byDefault` when unset. */
const retryScheduleOf = (byDefault: string) =>
  z
    .string()
    .default(byDefault)
    .transform((s, ctx) => {
      const steps = s.split(',').map((x) => Number(x.trim()));
      if (!steps.length || steps.some((x) => !Number.isFinite(x) || x < 0 || x > 7 * 86400)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma list of seconds (0 to 604800)' });
        return z.NEVER;
      }
      return steps;
    });
const retrySchedule = retryScheduleOf('5,300,1800,7200,18000,36000,36000');

const flag = (byDefault: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? byDefault : v === 'true' || v === '1' || v === 'yes'));

/** Every setting of every process, read from the environment; docs/configuration.md has the table. */
export const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  NATS_URL: z.string().optional(),
  /** Copies of the action event stream (and its consumers) a NATS cluster keeps: 3 on a cluster of three or more. */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Hours the action event stream keeps an event (resumed event streams replay from it; the notifier acks at once). */
  NATS_STREAM_MAX_AGE_HOURS: z.coerce.number().int().min(1).max(8760).default(168),
  DATA_DIR: z.string().default('./.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BUS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only')
    .default('aa'),
  BUS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  BUS_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(128),
  /** A serving replica's progress interval on a request it is still working on (the first after half of it). */
  BUS_HEARTBEAT_MS: z.coerce.number().int().min(20).max(10_000).default(150),
  /** A replica that says nothing this long after a request was sent to it is taken for dead: the request goes again. */
  BUS_FIRST_WORD_MS: z.coerce.number().int().min(50).max(60_000).default(300),
  /** A replica whose progress stops this long is taken for dead. */
  BUS_SILENCE_MS: z.coerce.number().int().min(100).max(60_000).default(500),
  /** Sends of one bus request at most after dead replicas (the first included). */
  BUS_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  /** How long a request waits for a replica to appear when none listens, then 503. */
  BUS_NO_RESPONDERS_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  /** How long a request waits for a lost NATS connection to come back, then 503. */
  BUS_DISCONNECTED_WAIT_MS: z.coerce.number().int().min(0).max(120_000).default(3_000),
  /** Pause between attempts to reconnect to NATS, plus a random part up to NATS_RECONNECT_JITTER_MS. */
  NATS_RECONNECT_WAIT_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  NATS_RECONNECT_JITTER_MS: z.coerce.number().int().min(0).max(10_000).default(100),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  ACTIONS_KEYS: z.string().optional(),
  /** ES256 receipt keys "kid:base64 PKCS8[,kid:base64 PKCS8 or SPKI…]": the first signs, all are published. */
  RECEIPT_KEYS: z.string().optional(),
  /** The receipts' `iss`; by default PUBLIC_BASE_URL, else the gateway's own address. */
  RECEIPT_ISSUER: z.string().url().optional(),
  /** The API base URL clients use (ending in /api/v1), when the service sits behind a proxy or load balancer. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Receipts and audit chain sealing (docs/security.md); switched off only to measure what they cost. */
  RECEIPTS: flag(true),
  AUDIT_SEAL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  ALLOW_INSECURE_HOSTS: commaList,
  VAULT_KEYS: z.string().optional(),
  VAULT_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  VAULT_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(5_000),
  // The response crosses the bus as JSON; keep it well below NATS max_payload (1 MiB by default).
  VAULT_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(4 * 1024 * 1024)
    .default(256 * 1024),
  VAULT_EXTRA_CA_CERTS: z.string().optional(),
  RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /**
   * Days requests and audit events are kept: older months' partitions are dropped, the audit trail's after a signed
   * checkpoint per account (docs/decisions.md); unset keeps everything.
   */
  RETENTION_DAYS: z.coerce.number().int().min(7).max(36_500).optional(),
  /** How often the actions service makes the coming months' partitions (requests, audit) and applies RETENTION_DAYS. */
  PARTITION_UPKEEP_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(3_600_000),
  /**
   * Who makes the notifier's and identity's outbound calls (webhooks, Web Push, OAuth client documents): the vault
   * executor, over the bus, so that it is the one process with a route to the internet (the default); or `direct`,
   * each service itself.
   */
  OUTBOUND_VIA: z.enum(['vault-executor', 'direct']).default('vault-executor'),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
  /** Days a finished webhook delivery and its attempts stay in the notifier's tables (the audit trail keeps them). */
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  /**
   * The SMTP server email goes out through, `smtp://user:pass@host:587` (or smtps:// for TLS from the start): invites
   * and escalations. Unset: no email. Read by the process that talks SMTP (the vault executor, unless
   * OUTBOUND_VIA=direct) and by the notifier (which sends only when it is set).
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From of the emails: an address, or `Name <address>`. */
  EMAIL_FROM: z.string().min(3).default('Agent Auth <no-reply@localhost>'),
  /** Seconds between attempts of an email the SMTP server did not take; given up after the last. */
  EMAIL_RETRY_SCHEDULE: retryScheduleOf('5,60,300,1800,7200'),
  VAPID_PUBLIC_KEY: z.string().optional(),
  VAPID_PRIVATE_KEY: z.string().optional(),
  VAPID_SUBJECT: z.string().optional(),
  DEVICE_STREAM_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  DEMO_ACCOUNT: flag(true),
  LOG_REQUESTS: flag(true),
  FREE_PLAN_MONTHLY_ACTIONS: z.coerce.number().int().min(0).default(25),
  RATE_LIMITS: flag(true),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  RATE_LIMIT_AGENT: z.coerce.number().int().min(1).max(10_000).default(120),
  RATE_LIMIT_DEVICE: z.coerce.number().int().min(1).max(10_000).default(60),
  RATE_LIMIT_IP: z.coerce.number().int().min(1).max(10_000).default(10),
  METRICS: flag(true),
  /** By default each service process's own port (defaultMetricsPorts), so all of them can run on one host. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  TRUST_PROXY: z
    .string()
    .regex(/^[0-9A-Fa-f.:/, ]*$/, 'proxy addresses or CIDR ranges, comma separated')
    .default(''),
  /** Browser origins besides the service's own that may call /mcp (e.g. a web MCP client); `*` for any. */
  MCP_ALLOWED_ORIGINS: commaList,
  /** OAuth (the identity service): how long an access token for /mcp lives, and a refresh token. */
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(365 * 86_400)
    .default(30 * 86_400),
  /**
   * Sign-in with the company's OpenID Connect provider (the identity service): its issuer URL, and this service's
   * client registered there (its redirect URI is <origin>/auth/oidc/callback). Unset: no such sign-in.
   */
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The name on the device app's "Sign in with …" button; by default the issuer's host. */
  OIDC_PROVIDER_NAME: z.string().min(1).max(60).optional(),
  // Passkeys: the rp id they are bound to and the origins the app is served from; by default the host
  // (and origin) each request to the app names.
  WEBAUTHN_RP_ID: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,253}$/, 'a domain name, e.g. approvals.example.com')
    .optional(),
  WEBAUTHN_ORIGINS: z
    .string()
    .refine(
      (v) => v.split(',').every((o) => URL.canParse(o.trim()) && new URL(o.trim()).origin === o.trim()),
      'origins like https://approvals.example.com, comma separated',
    )
    .optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

/** A setting that is missing or malformed: start-up stops with this one-line message, which names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses and validates the environment; a bad value stops start-up with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = ConfigSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  return result.data;
}

/** Returns a setting that this process cannot run without, or fails start-up naming it. */
export function requireSetting<K extends keyof Config>(config: Config, key: K, why: string): NonNullable<Config[K]> {
  const value = config[key];
  if (value === undefined || value === null || value === '')
    throw new ConfigError(`${String(key)} must be set: ${why}`);
  return value as NonNullable<Config[K]>;
}

/** Parses a setting's value (e.g. a keyring); a value the parser refuses fails start-up naming the variable. */
export function parseSetting<T>(key: keyof Config, value: string, parse: (value: string) => T): T {
  try {
    return parse(value);
  } catch (err) {
    throw new ConfigError(`${String(key)} is not valid: ${(err as Error).message}`);
  }
}

/** True when a host (name or IP literal) is exempt from the https and private-address rules, for local development. */
export function isInsecureHostAllowed(config: Pick<Config, 'ALLOW_INSECURE_HOSTS'>, host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return config.ALLOW_INSECURE_HOSTS.includes(bare);
}

/**
 * Where each service process without an HTTP port of its own serves GET /metrics when METRICS_PORT is not set:
 * distinct ports, so that every service started on one host (`npm run start -w services/<name>`) finds its port free.
 */
export const defaultMetricsPorts: Readonly<Record<string, number>> = {
  actions: 9464,
  policy: 9465,
  'vault-executor': 9466,
  notifier: 9467,
  identity: 9468,
};

/** The port a service process serves GET /metrics on: METRICS_PORT, else its own default (any free port if none). */
export function metricsPortOf(config: Pick<Config, 'METRICS_PORT'>, service: string): number {
  return config.METRICS_PORT ?? defaultMetricsPorts[service] ?? 0;
}

/** The settings of one part of the system: each service is handed only its slice of the configuration. */
function slice<K extends keyof Config>(...keys: K[]) {
  return keys;
}

/** Process settings the service scaffold reads (connections, logging, bus), not the services themselves. */
export const processSettingKeys = slice(
  'LOG_LEVEL',
  'DATABASE_URL',
  'NATS_URL',
  'NATS_STREAM_REPLICAS',
  'NATS_STREAM_MAX_AGE_HOURS',
  'BUS_PREFIX',
  'BUS_TIMEOUT_MS',
  'BUS_HEARTBEAT_MS',
  'BUS_FIRST_WORD_MS',
  'BUS_SILENCE_MS',
  'BUS_ATTEMPTS',
  'BUS_NO_RESPONDERS_WAIT_MS',
  'BUS_DISCONNECTED_WAIT_MS',
  'NATS_RECONNECT_WAIT_MS',
  'NATS_RECONNECT_JITTER_MS',
  'DB_POOL_SIZE',
);
export const actionsSettingKeys = slice(
  'BUS_CONCURRENCY',
  // How long a repeat of an Idempotency-Key waits for the first (just under the caller's bus time-out).
  'BUS_TIMEOUT_MS',
  'FREE_PLAN_MONTHLY_ACTIONS',
  'ALLOW_INSECURE_HOSTS',
  'RELAY_POLL_MS',
  'SWEEP_INTERVAL_MS',
  'RECEIPTS',
  'AUDIT_SEAL_INTERVAL_MS',
  'RETENTION_DAYS',
  'PARTITION_UPKEEP_MS',
);
export const policySettingKeys = slice('BUS_CONCURRENCY');
export const vaultSettingKeys = slice(
  'BUS_CONCURRENCY',
  'ALLOW_INSECURE_HOSTS',
  'VAULT_CONNECT_TIMEOUT_MS',
  'VAULT_RESPONSE_TIMEOUT_MS',
  'VAULT_MAX_RESPONSE_BYTES',
  'VAULT_EXTRA_CA_CERTS',
  'SMTP_URL',
  'EMAIL_FROM',
);
export const notifierSettingKeys = slice(
  'BUS_CONCURRENCY',
  'ALLOW_INSECURE_HOSTS',
  'OUTBOUND_VIA',
  'SMTP_URL',
  'EMAIL_FROM',
  'EMAIL_RETRY_SCHEDULE',
  // The device app's origin in an escalation's link, when the service sits behind a proxy.
  'PUBLIC_BASE_URL',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_CONCURRENCY',
  'WEBHOOK_RETENTION_DAYS',
  'WEBHOOK_POLL_MS',
  'VAPID_PUBLIC_KEY',
  'VAPID_PRIVATE_KEY',
  'VAPID_SUBJECT',
);
export const identitySettingKeys = slice(
  'BUS_CONCURRENCY',
  // A client ID metadata document at an http URL is fetched only from these hosts (local development).
  'ALLOW_INSECURE_HOSTS',
  'OUTBOUND_VIA',
  'OAUTH_ACCESS_TOKEN_TTL_SECONDS',
  'OAUTH_REFRESH_TOKEN_TTL_SECONDS',
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_PROVIDER_NAME',
);
export const gatewaySettingKeys = slice(
  'HOST',
  'PORT',
  // The origin of the MCP resource and the OAuth issuer, the same on every replica.
  'PUBLIC_BASE_URL',
  'MCP_ALLOWED_ORIGINS',
  'AUTH_CACHE_TTL_MS',
  'LOG_REQUESTS',
  'TRUST_PROXY',
  'RATE_LIMITS',
  'RATE_LIMIT_WINDOW_SECONDS',
  'RATE_LIMIT_AGENT',
  'RATE_LIMIT_DEVICE',
  'RATE_LIMIT_IP',
  'DEVICE_STREAM_HEARTBEAT_MS',
  'METRICS',
  // An execution's reply waits for the upstream: the gateway gives it the executor's limits plus a margin.
  'BUS_TIMEOUT_MS',
  'VAULT_CONNECT_TIMEOUT_MS',
  'VAULT_RESPONSE_TIMEOUT_MS',
  'WEBAUTHN_RP_ID',
  'WEBAUTHN_ORIGINS',
);

export type ActionsSettings = Pick<Config, (typeof actionsSettingKeys)[number]>;
export type PolicySettings = Pick<Config, (typeof policySettingKeys)[number]>;
export type VaultSettings = Pick<Config, (typeof vaultSettingKeys)[number]>;
export type NotifierSettings = Pick<Config, (typeof notifierSettingKeys)[number]>;
export type GatewaySettings = Pick<Config, (typeof gatewaySettingKeys)[number]>;
export type IdentitySettings = Pick<Config, (typeof identitySettingKeys)[number]>;

/** Only the named settings of a configuration: what a service is handed, so it cannot read anyone else's. */
export function pickSettings<K extends keyof Config>(config: Config, keys: readonly K[]): Pick<Config, K> {
  return Object.fromEntries(keys.map((k) => [k, config[k]])) as Pick<Config, K>;
}
