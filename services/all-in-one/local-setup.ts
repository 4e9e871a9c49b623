import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { actionsEndpoints, type AccountCreated, newAccountOf } from '@agent-auth/contracts';
import { generateKeyringSpec } from '@agent-auth/encryption';
import type { Bus } from '@agent-auth/bus';
import { generateReceiptKeySpec } from '@agent-auth/actions';

/** The data folder, created if missing; everything all-in-one mode keeps lives here. */
export function ensureDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * A key spec kept in the data folder's keys.json, generated on first use (only when its variable is unset): the
 * actions and vault keyrings, and the receipt signing keys.
 * All-in-one holds both the actions and the vault keyring in one process; the split deployments give VAULT_KEYS to
 * the vault executor alone.
 */
export function localKeyringSpec(
  dataDir: string,
  name: 'ACTIONS_KEYS' | 'VAULT_KEYS' | 'RECEIPT_KEYS' = 'ACTIONS_KEYS',
): string {
  const file = join(dataDir, 'keys.json');
  const keys = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  if (keys[name]) return keys[name];
  keys[name] = name === 'RECEIPT_KEYS' ? generateReceiptKeySpec('r1') : generateKeyringSpec('k1');
  writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  return keys[name];
}

/**
 * Creates the demo account on first start and tells the operator where things are. The banner goes to stderr, never
 * to stdout, which carries the JSON log lines; the account's device id and API key are written to the data folder
 * (mode 0600) and shown in the banner only when stderr is a terminal, so they never land in a collected log.
 */
export async function announceDemoAccount(
  bus: Bus,
  dataDir: string,
  baseUrl: string,
  terminal = Boolean(process.stderr.isTTY),
): Promise<void> {
  const file = join(dataDir, 'demo-account.json');
  const origin = new URL(baseUrl).origin;
  const out = (text: string) => process.stderr.write(`${text}\n`);
  out('');
  out(`Agent action authorization service is up.`);
  out(`  API base URL : ${baseUrl}`);
  out(`  Device app   : ${origin}/app/    (sign in with the device id)`);
  out(`  API reference: ${origin}/docs`);
  out(`  Health       : ${origin}/healthz    Metrics: ${origin}/metrics`);
  if (existsSync(file)) {
    out(`  Demo account : kept in ${file}`);
    out('');
    return;
  }
  const account: AccountCreated = await bus.request(
    actionsEndpoints.createAccount,
    newAccountOf({ device_name: 'demo device' }),
  );
  writeFileSync(file, `${JSON.stringify({ base_url: baseUrl, ...account }, null, 2)}\n`, { mode: 0o600 });
  if (!terminal) {
    out(`  Demo account : created now; its device id and API key are in ${file} (mode 0600)`);
    out('');
    return;
  }
  out(`  Demo account (created now, also saved in ${file}):`);
  out(`    account_id : ${account.account_id}`);
  out(`    device_id  : ${account.device_id}    (header X-Device-Id)`);
  out(`    api_key    : ${account.api_key}    (header X-API-Key)`);
  out('');
  out(`  Try it:`);
  const create = `curl -s -X POST ${baseUrl}/actions -H 'X-API-Key: ${account.api_key}' -H 'Content-Type: application/json'`;
  out(`    ${create} -d '{"action_type":"purchase","title":"Buy a book","amount":12.5}'`);
  out(`    curl -s ${baseUrl}/pending -H 'X-Device-Id: ${account.device_id}'`);
  out('');
}
