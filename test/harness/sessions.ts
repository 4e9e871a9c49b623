import { inject, it } from 'vitest';

/**
 * Why a test that queries the database beside a running service is skipped, or '' where it runs: the embedded
 * Postgres of the tests' fallback takes one connection at a time, and the service under test holds it.
 */
export const secondSession = inject('infra').isolatedDatabases
  ? ''
  : 'the embedded Postgres takes one connection at a time, held by the service under test';

/** A test that reads or writes the database while the service runs: skipped, with the reason, on the fallback. */
export function itBesideTheService(
  name: string,
  fn: Parameters<typeof it>[1],
  options?: Parameters<typeof it>[2],
): void {
  it.skipIf(secondSession)(secondSession ? `${name} (skipped: ${secondSession})` : name, fn, options);
}
