// Errors an operator fixes outside the code: a setting, a port taken, a server that does not answer.
const OPERATOR_ERRNO = new Set([
  'EADDRINUSE',
  'EACCES',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);
const OPERATOR_ERRORS = new Set(['ConfigError', 'StartupError']);

/** A condition outside the code that stops start-up (e.g. NATS does not answer): reported in one line. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/**
 * Makes a configuration error (ConfigError, naming the variable), a StartupError or an operator error (port in use,
 * a server that refuses connections) end the process with one clear line on stderr instead of a stack trace. Call
 * it first in a main. Anything else still prints its stack: that is a bug to report.
 */
export function exitOnStartupError(processName: string): void {
  process.on('uncaughtException', (err: Error & { code?: string }) => {
    const operator = OPERATOR_ERRORS.has(err?.name) || (typeof err?.code === 'string' && OPERATOR_ERRNO.has(err.code));
    process.stderr.write(
      operator ? `${processName}: cannot start: ${err.message}\n` : `${processName}: ${err?.stack ?? String(err)}\n`,
    );
    process.exit(1);
  });
}
