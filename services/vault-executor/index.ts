import { readFileSync } from 'node:fs';
import type { Bus } from '@agent-auth/bus';
import type { VaultSettings } from '@agent-auth/config';
import { type RelayLimits, vaultEndpoints } from '@agent-auth/contracts';
import { packageDir, type Sql } from '@agent-auth/db';
import type { Keyring } from '@agent-auth/encryption';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { createOutboundClient, createSmtpSender, type OutboundClient } from '@agent-auth/outbound';
import { actionsOverBus } from './adapters/actions.js';
import { credentialHandlers } from './handlers/credentials.js';
import { executeHandlers } from './handlers/execute.js';
import { relayHandlers } from './handlers/relay.js';
import { createCredentialStore } from './store/credentials.js';
import { createCredentials } from './use-cases/credentials.js';
import { createExecution } from './use-cases/execute.js';
import { createRelay } from './use-cases/relay.js';
import { createMailRelay } from './use-cases/relay-mail.js';

/** PEM certificates named by VAULT_EXTRA_CA_CERTS (comma-separated files), trusted besides the system roots. */
function extraCaCerts(settings: VaultSettings): string[] {
  const files = (settings.VAULT_EXTRA_CA_CERTS ?? '').split(',').map((f) => f.trim());
  return files.filter(Boolean).map((f) => readFileSync(f, 'utf8'));
}

/**
 * Outbound clients for relayed calls, one per set of limits (each caller uses one or two), under the executor's
 * rules: its insecure development hosts and its extra CAs.
 */
function relayClients(settings: VaultSettings, extraCa: string[]) {
  const clients = new Map<string, OutboundClient>();
  return {
    outboundFor(limits: RelayLimits): OutboundClient {
      const key = `${limits.connect_timeout_ms}/${limits.response_timeout_ms}/${limits.max_response_bytes}`;
      let client = clients.get(key);
      if (!client) {
        client = createOutboundClient({
          allowInsecureHosts: settings.ALLOW_INSECURE_HOSTS,
          connectTimeoutMs: limits.connect_timeout_ms,
          responseTimeoutMs: limits.response_timeout_ms,
          maxResponseBytes: limits.max_response_bytes,
          extraCaCerts: extraCa,
        });
        clients.set(key, client);
      }
      return client;
    },
    close: () => Promise.all([...clients.values()].map((client) => client.close())),
  };
}

/**
 * Migrates the vault schema and serves the vault endpoints: the only holder of the vault keyring and the only
 * process that calls out to the internet, on a credential's behalf and, through the relay, for the other services.
 */
export async function startVaultExecutor(input: {
  bus: Bus;
  sql: Sql;
  keyring: Keyring;
  settings: VaultSettings;
  log: Logger;
}) {
  const { bus, sql, keyring, settings, log } = input;
  const extraCa = extraCaCerts(settings);
  const outbound = createOutboundClient({
    allowInsecureHosts: settings.ALLOW_INSECURE_HOSTS,
    connectTimeoutMs: settings.VAULT_CONNECT_TIMEOUT_MS,
    responseTimeoutMs: settings.VAULT_RESPONSE_TIMEOUT_MS,
    maxResponseBytes: settings.VAULT_MAX_RESPONSE_BYTES,
    extraCaCerts: extraCa,
  });
  const relayed = relayClients(settings, extraCa);
  // The SMTP server the notifier's email goes out through (its URL, password included, stays in this process).
  const smtp = settings.SMTP_URL ? createSmtpSender({ url: settings.SMTP_URL, from: settings.EMAIL_FROM }) : null;
  const credentials = createCredentialStore(sql);
  const execution = createExecution({ credentials, keyring, outbound, ledger: actionsOverBus(bus) });
  const served = await serveBusService({
    bus,
    sql,
    log,
    name: 'vault',
    description: 'Vault credentials and the execution of approved API calls with a credential injected',
    migrations: { schema: 'vault', dir: `${packageDir(import.meta.url)}/store/migrations` },
    health: vaultEndpoints.health,
    handlers: [
      ...credentialHandlers(createCredentials({ credentials, keyring })),
      ...executeHandlers(execution),
      ...relayHandlers(createRelay({ outboundFor: relayed.outboundFor }), createMailRelay({ sender: smtp })),
    ],
    concurrency: settings.BUS_CONCURRENCY,
  });
  return {
    async stop() {
      await served.stop();
      await execution.settled(); // outcome records sent after their answers
      await outbound.close();
      await relayed.close();
      smtp?.close();
    },
  };
}
