// agent-auth-verify: checks a receipt or an exported audit chain offline, from a saved JWKS (or fetches the JWKS).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { decodeJwt, type JSONWebKeySet } from 'jose';
import {
  verifyAuditChain,
  verifyReceipt,
  VerificationError,
  type AuditCheckpoint,
  type AuditEvent,
  type AuditHead,
} from './verify.js';

const USAGE = `Usage:
  agent-auth-verify <receipt.jws | -> [--jwks <file | url>] [--issuer <iss>]
  agent-auth-verify --audit <export.json> --jwks <file | url>

A receipt is checked against the JWKS (by default fetched from its issuer's /.well-known/jwks.json).
An audit export is JSON {"events": [...GET /audit events], "head": {...GET /audit/head}}, with "checkpoint" (the
first page's) where retention cut the chain; the first broken event is named. Exit status: 0 verified, 1 not verified, 2 usage or input error.`;

async function loadJwks(source: string): Promise<JSONWebKeySet> {
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source);
    if (!res.ok) throw new Error(`could not fetch the JWKS from ${source}: HTTP ${res.status}`);
    return (await res.json()) as JSONWebKeySet;
  }
  return JSON.parse(readFileSync(source, 'utf8')) as JSONWebKeySet;
}

function readInput(path: string): string {
  return readFileSync(path === '-' ? 0 : path, 'utf8');
}

/** The issuer's JWKS address, from the (not yet verified) receipt's iss. */
function jwksOfIssuer(receipt: string): string {
  const iss = decodeJwt(receipt).iss;
  if (!iss) throw new Error('the receipt names no issuer: pass --jwks');
  return new URL('/.well-known/jwks.json', iss).toString();
}

/** The command line's flags and the receipt file, or a thrown error naming what is wrong. */
function parseVerifierArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      jwks: { type: 'string' },
      audit: { type: 'string' },
      issuer: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
}

/** Runs the verifier; resolves to the exit status. */
export async function main(
  argv: string[],
  write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  let args: ReturnType<typeof parseVerifierArgs>;
  try {
    args = parseVerifierArgs(argv);
  } catch (err) {
    write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help || (!values.audit && positionals.length !== 1)) {
    write(USAGE);
    return values.help ? 0 : 2;
  }
  try {
    if (values.audit) {
      if (!values.jwks) throw new Error('--audit needs --jwks (a saved JWKS file or its URL)');
      const exported = JSON.parse(readInput(values.audit)) as {
        events?: AuditEvent[];
        head?: AuditHead;
        checkpoint?: AuditCheckpoint;
      };
      if (!Array.isArray(exported.events) || !exported.head)
        throw new Error('the export must be JSON {"events": [...], "head": {...}} (and "checkpoint" where it was cut)');
      const chain = await verifyAuditChain(exported.events, exported.head, await loadJwks(values.jwks), {
        checkpoint: exported.checkpoint,
      });
      const from = chain.checkpoint_seq === undefined ? '' : ` from the checkpoint at event ${chain.checkpoint_seq}`;
      write(
        `audit chain verified${from}: account ${chain.account_id}, ${chain.events} events, signed head at event ${chain.head_seq} (${chain.head_hash})`,
      );
      return 0;
    }
    const receipt = readInput(positionals[0]!).trim();
    const jwks = await loadJwks(values.jwks ?? jwksOfIssuer(receipt));
    const claims = await verifyReceipt(receipt, jwks, { issuer: values.issuer });
    write(`receipt verified: request ${claims.sub} ${claims.status} by ${claims.resolved_by} at ${claims.resolved_at}`);
    write(JSON.stringify(claims, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof VerificationError) {
      write(`NOT VERIFIED: ${err.message}${err.seq !== undefined ? ` (first broken event: ${err.seq})` : ''}`);
      return 1;
    }
    write(`error: ${(err as Error).message}`);
    return 2;
  }
}
