import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths whose values are secrets: pino replaces them before a line is written. */
export const redactedPaths = [
  'api_key',
  '*.api_key',
  'webhook_secret',
  '*.webhook_secret',
  'device_id',
  '*.device_id',
  'credential_value',
  '*.credential_value',
  'secret',
  '*.secret',
  'totp_code',
  '*.totp_code',
  'req.headers["x-api-key"]',
  'req.headers["x-device-id"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers["x-device-id"]',
  'headers.authorization',
];

/** The structured logger of one service process. */
export function createLogger(options: {
  service: string;
  level?: string;
  destination?: pino.DestinationStream;
}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      redact: { paths: redactedPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
