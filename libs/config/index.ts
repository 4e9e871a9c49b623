import { z } from 'zod';
import { errors } from '@agent-auth/errors';

const commaList = z
  .string()
  .default('')
  .transform((s) => s.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean));

// Seconds to wait before each retry, counted from the attempt before it (fractions allowed, for tests).
const retrySchedule = z
  .string()
  .default('5,300,1800,7200,18000,36000,36000')
  .transform((s, ctx) => {
    const steps = s.split(',').map((x) => Number(x.trim()));
    if (!steps.length || steps.some((x) => !Number.isFinite(x) || x < 0 || x > 7 * 86400)) {
      ctx.addIssue({ code: 'custom', message: 'must be a comma list of seconds (0 to 604800)' });
      return z.NEVER;
    }
    return steps;
  });

const flag = (byDefault: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? byDefault : v === 'true' || v === '1' || v === 'yes'));

/** Every setting of every process, read from the environment; README.md has the table. */
export const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  NATS_URL: z.string().optional(),
  DATA_DIR: z.string().default('./.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BUS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only').default('aa'),
  BUS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  BUS_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(128),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  ACTIONS_KEYS: z.string().optional(),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
  ALLOW_INSECURE_HOSTS: commaList,
  VAULT_KEYS: z.string().optional(),
  VAULT_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  VAULT_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(5_000),
  // The response crosses the bus as JSON; keep it well below NATS max_payload (1 MiB by default).
  VAULT_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1).max(4 * 1024 * 1024).default(256 * 1024),
  VAULT_EXTRA_CA_CERTS: z.string().optional(),
  RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
  /** Days a finished webhook delivery and its attempts stay in the notifier's tables (the audit trail keeps them). */
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
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
  TRUST_PROXY: z.string().regex(/^[0-9A-Fa-f.:/, ]*$/, 'proxy addresses or CIDR ranges, comma separated').default(''),
});
export type Config = z.infer<typeof ConfigSchema>;

/** Parses and validates the environment; a bad value stops start-up with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = ConfigSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return result.data;
}

/** Returns a setting that this process cannot run without, or fails start-up naming it. */
export function requireSetting<K extends keyof Config>(config: Config, key: K, why: string): NonNullable<Config[K]> {
  const value = config[key];
  if (value === undefined || value === null || value === '') throw new Error(`${String(key)} must be set: ${why}`);
  return value as NonNullable<Config[K]>;
}

/** True when a host (name or IP literal) is exempt from the https and private-address rules, for local development. */
export function isInsecureHostAllowed(config: Pick<Config, 'ALLOW_INSECURE_HOSTS'>, host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return config.ALLOW_INSECURE_HOSTS.includes(bare);
}

/** Checks a callback URL: https, or http only to a configured development host. */
export function checkCallbackUrl(config: Pick<Config, 'ALLOW_INSECURE_HOSTS'>, url: string): void {
  const parsed = new URL(url);
  if (parsed.protocol === 'https:') return;
  if (isInsecureHostAllowed(config, parsed.hostname)) return;
  throw errors.badRequest('callback_url: must be an https URL');
}
