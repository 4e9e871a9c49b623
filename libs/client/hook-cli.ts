// agent-auth-hook: a coding agent's command hook (Codex runs hooks as commands) that asks the holder through the
// service: the hook input on stdin goes to POST {AGENT_AUTH_URL}/hooks/<client>, the service's answer comes out on
// stdout. When no answer can be had, it blocks (exit 2 with the reason on stderr), so a service that cannot be
// reached never lets a tool run unasked.
import { parseArgs } from 'node:util';

const USAGE = `Usage: agent-auth-hook <codex | claude-code> [--timeout <seconds>] [--on-timeout deny|ask]

Reads the hook input JSON on stdin, asks the holder through the service and prints the hook output.
Environment: AGENT_AUTH_API_KEY (the agent's key), AGENT_AUTH_URL (e.g. https://host/api/v1).
Exit status: 0 answered (allow, deny or no decision, as printed); 2 blocked: no answer could be had (the reason on
stderr, which the client shows the model).`;

const CLIENTS = new Set(['codex', 'claude-code']);
/** How much longer than the held answer the call may take before it is given up. */
const NETWORK_MARGIN_MS = 15_000;

/** What to do with the arguments: the client and the query of the hook call, or a usage error. */
export function hookCallOf(argv: string[]): { client: string; timeout: number; onTimeout: string } | string {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { timeout: { type: 'string' }, 'on-timeout': { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (err) {
    return (err as Error).message;
  }
  const client = parsed.positionals[0];
  if (parsed.values.help || !client) return USAGE;
  if (!CLIENTS.has(client)) return `unknown client '${client}': codex or claude-code`;
  const timeout = Number(parsed.values.timeout ?? 290);
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600) return '--timeout: must be 1 to 3600 seconds';
  const onTimeout = String(parsed.values['on-timeout'] ?? 'deny');
  if (onTimeout !== 'deny' && onTimeout !== 'ask') return '--on-timeout: must be deny or ask';
  return { client, timeout, onTimeout };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs the hook; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  const call = hookCallOf(argv);
  if (typeof call === 'string') {
    process.stderr.write(`${call}\n`);
    return 2;
  }
  const key = process.env.AGENT_AUTH_API_KEY;
  const base = (process.env.AGENT_AUTH_URL ?? 'http://127.0.0.1:8080/api/v1').replace(/\/+$/, '');
  if (!key) {
    process.stderr.write('agent-auth-hook: AGENT_AUTH_API_KEY is not set; blocked\n');
    return 2;
  }
  const url = `${base}/hooks/${call.client}?timeout=${call.timeout}&on_timeout=${call.onTimeout}`;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: await readStdin(),
      signal: AbortSignal.timeout(call.timeout * 1000 + NETWORK_MARGIN_MS),
    });
    const text = await res.text();
    if (res.ok) {
      process.stdout.write(text);
      return 0;
    }
    let detail = text;
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? text;
    } catch {
      /* the body as it came */
    }
    process.stderr.write(`agent-auth-hook: the service answered ${res.status}: ${detail}; blocked\n`);
    return 2;
  } catch (err) {
    process.stderr.write(`agent-auth-hook: no answer from ${base} (${(err as Error).message}); blocked\n`);
    return 2;
  }
}
