import type { RequestContext } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  type ClaimedExecution,
  type ExecutionRecord,
  newId,
  type VaultExecutionResult,
  vaultContentHash,
} from '@agent-auth/contracts';
import { safeEqual } from '@agent-auth/encryption';
import { type AppError, errors, toAppError } from '@agent-auth/errors';
import { OutboundError } from '@agent-auth/outbound';
import type { ExecutionLedger } from '../adapters/actions.js';
import { credentialHeader, injectCredential, redact, secretForms } from '../domain/injection.js';
import type { CredentialRow } from '../domain/rows.js';
import { inFlightWork } from '@agent-auth/lifecycle';
import { credentialContext, type VaultDeps } from './deps.js';

interface Attempt {
  targetHost: string | null;
  statusCode: number | null;
  /** The call may have reached the upstream: only then is the approval used up. */
  dialed: boolean;
}

/** What an agent gets when the outbound client had no response: refusals are 403, everything else 502. */
function outboundToAppError(err: OutboundError): AppError {
  if (err.kind === 'refused') return errors.outboundRefused(err.detail);
  if (err.kind === 'timeout') return errors.upstreamTimeout(err.detail);
  if (err.kind === 'too_large') return errors.upstreamTooLarge(err.detail);
  return errors.upstreamFailed(err.detail);
}

type Deps = Pick<VaultDeps, 'credentials' | 'keyring' | 'outbound'> & { ledger: ExecutionLedger };

/**
 * The most credentials of an account read beside the claim: the claim names the service only when it answers, and
 * reading a small vault at once takes the lookup's round trip off the call's path. A larger vault is looked up by name.
 */
const READ_WITH_CLAIM_MAX = 20;

/** POST /vault/execute/{id}: claim the approved request once (actions), make the call, audit the attempt. */
export function createExecution(deps: Deps) {
  /** The claimed call's credential: from the vault read beside the claim (that account's, when small), else by name. */
  const credentialFor = async (claim: ClaimedExecution, vault: Promise<CredentialRow[] | undefined>) => {
    const read = await vault;
    const service = claim.metadata.service_name;
    if (read?.every((c) => c.account_id === claim.account_id)) return read.find((c) => c.service_name === service);
    return deps.credentials.findByService(claim.account_id, service);
  };

  /** Makes the claimed call: hash re-checked, host allowed, credential injected, response redacted. */
  const makeCall = async (
    claim: ClaimedExecution,
    vault: Promise<CredentialRow[] | undefined>,
    attempt: Attempt,
  ): Promise<VaultExecutionResult> => {
    const call = claim.metadata;
    if (!safeEqual(vaultContentHash(call), claim.content_hash)) throw errors.contentHashMismatch('execution');
    const host = new URL(call.url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    attempt.targetHost = host;
    const credential = await credentialFor(claim, vault);
    if (!credential) throw errors.serviceCredentialNotFound(call.service_name);
    if (!credential.allowed_hosts.includes(host)) throw errors.hostNotAllowed(host, call.service_name);
    const secret = deps.keyring.decrypt(credential.value_enc, credentialContext(credential));
    const header = credentialHeader(credential, secret);
    const forms = secretForms(secret);
    try {
      attempt.dialed = true;
      const res = await deps.outbound.request({
        url: call.url,
        method: call.method,
        headers: injectCredential(call.headers ?? {}, header),
        body: call.body ?? null,
      });
      attempt.statusCode = res.statusCode;
      const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, redact(v, forms)]));
      return { status_code: res.statusCode, headers, body: redact(res.body.toString('utf8'), forms) };
    } catch (err) {
      // A refused address is refused by the pinned lookup, before any connection.
      if (err instanceof OutboundError && err.kind === 'refused') attempt.dialed = false;
      if (err instanceof OutboundError) throw outboundToAppError(err);
      throw err;
    }
  };

  const recording = inFlightWork();

  /** Executes an approved call; `settled` waits for the outcome records still being written (at shutdown). */
  const execute = async function execute(agent: AgentPrincipal, requestId: string, ctx: RequestContext) {
    const held = { agent, request_id: requestId, claim_id: newId('executionClaim') };
    const vault = deps.credentials.allIfFew(agent.account_id, READ_WITH_CLAIM_MAX);
    vault.catch(() => {}); // a refused claim leaves it unread; a failed read fails the call when it is read
    const claim = await deps.ledger.claim(held, ctx);
    const started = performance.now();
    const attempt: Attempt = { targetHost: null, statusCode: null, dialed: false };
    const elapsed = () => Math.round(performance.now() - started);
    const entry = (fields: Omit<ExecutionRecord, 'agent' | 'request_id' | 'target_host' | 'latency_ms'>) => ({
      agent,
      request_id: requestId,
      target_host: attempt.targetHost,
      latency_ms: elapsed(),
      ...fields,
    });
    try {
      const result = await makeCall(claim, vault, attempt);
      const outcome = { status_code: result.status_code, error_status: null, detail: null };
      // Sent before the answer, not awaited by it: the claim (committed, flushed) already put the attempt in the
      // trail and makes the call run once; the outcome is a report, and a retry that races it waits for it (actions).
      recording.track(deps.ledger.record(entry({ outcome: 'succeeded', ...outcome }), ctx));
      const logged = { target_host: attempt.targetHost, status_code: result.status_code, latency_ms: elapsed() };
      ctx.log.info({ action_id: requestId, ...logged }, 'vault call executed');
      return result;
    } catch (err) {
      const failure = toAppError(err);
      const outcome = failure.status === 502 ? 'failed' : 'refused';
      const figures = {
        status_code: attempt.statusCode,
        error_status: failure.status,
        detail: failure.detail.slice(0, 500),
      };
      await deps.ledger.record(entry({ outcome, ...figures }), ctx);
      const logged = { target_host: attempt.targetHost, status: failure.status, detail: failure.detail };
      ctx.log.warn({ action_id: requestId, ...logged }, 'vault call not executed');
      if (!attempt.dialed) await deps.ledger.release(held, ctx);
      throw failure;
    }
  };
  return Object.assign(execute, { settled: () => recording.settled() });
}
