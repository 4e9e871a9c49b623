import { readFileSync } from 'node:fs';
import type { Bus } from '@agent-auth/bus';
import { handle } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import { vaultEndpoints, type EndpointDef } from '@agent-auth/contracts';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import type { Keyring } from '@agent-auth/encryption';
import type { Logger } from '@agent-auth/logging';
import { createOutboundClient } from '@agent-auth/outbound';
import { createCredentialStore } from './store/credentials.js';
import { credentialHandlers } from './handlers/credentials.js';
import { executeHandlers } from './handlers/execute.js';
import type { VaultDeps } from './handlers/deps.js';

/** PEM certificates named by VAULT_EXTRA_CA_CERTS (comma-separated files), trusted besides the system roots. */
function extraCaCerts(config: Config): string[] {
  return (config.VAULT_EXTRA_CA_CERTS ?? '').split(',').map((f) => f.trim()).filter(Boolean).map((f) => readFileSync(f, 'utf8'));
}

/**
 * Migrates the vault schema and serves the vault endpoints: the only holder of the vault keyring and the only
 * process that calls out to the internet on a credential's behalf.
 */
export async function startVaultExecutor(input: { bus: Bus; sql: Sql; keyring: Keyring; config: Config; log: Logger }) {
  const { sql, log, config } = input;
  await migrate(sql, { schema: 'vault', dir: `${packageDir(import.meta.url)}/store/migrations`, log });
  const outbound = createOutboundClient({
    allowInsecureHosts: config.ALLOW_INSECURE_HOSTS,
    connectTimeoutMs: config.VAULT_CONNECT_TIMEOUT_MS,
    responseTimeoutMs: config.VAULT_RESPONSE_TIMEOUT_MS,
    maxResponseBytes: config.VAULT_MAX_RESPONSE_BYTES,
    extraCaCerts: extraCaCerts(config),
  });
  const deps: VaultDeps = { ...input, credentials: createCredentialStore(sql), outbound };
  const health = handle(vaultEndpoints.health as EndpointDef, async () => {
    await sql`select 1`;
    return { ok: true };
  });
  const served = await input.bus.serve({
    name: 'vault',
    version: '0.1.0',
    description: 'Vault credentials and the execution of approved API calls with a credential injected',
    handlers: [health, ...credentialHandlers(deps), ...executeHandlers(deps)],
    concurrency: config.BUS_CONCURRENCY,
    log,
  });
  return {
    async stop() {
      await served.stop();
      await outbound.close();
    },
  };
}
