import { timingSafeEqual } from 'node:crypto';
import { actionsEndpoints, vaultContentHash, vaultEndpoints as ep, type AgentPrincipal, type ClaimedExecution, type ExecutionRecord, type VaultExecutionResult } from '@agent-auth/contracts';
import { AppError, errors, toAppError } from '@agent-auth/errors';
import { handle, type BoundHandler, type RequestContext } from '@agent-auth/bus';
import { OutboundError } from '@agent-auth/outbound';
import { credentialContext, type VaultDeps } from './deps.js';
import { credentialHeader, injectCredential, redact, secretForms } from './injection.js';

interface Attempt {
  targetHost: string | null;
  statusCode: number | null;
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What an agent gets when the outbound client had no response: refusals are 403, everything else 502. */
function outboundToAppError(err: OutboundError): AppError {
  if (err.kind === 'refused') return errors.forbidden(err.detail);
  if (err.kind === 'timeout') return errors.badGateway(`Upstream time-out: ${err.detail}`);
  if (err.kind === 'too_large') return errors.badGateway(`Upstream response too large: ${err.detail}`);
  return errors.badGateway(`Upstream error: ${err.detail}`);
}

/** Makes the claimed call: hash re-checked, host allowed, credential injected, response redacted. */
async function makeCall(deps: VaultDeps, claim: ClaimedExecution, attempt: Attempt): Promise<VaultExecutionResult> {
  const call = claim.metadata;
  if (!sameHash(vaultContentHash(call), claim.content_hash)) {
    throw errors.forbidden('The call differs from the approved one (content hash mismatch)');
  }
  const url = new URL(call.url);
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  attempt.targetHost = host;
  const credential = await deps.credentials.findByService(claim.account_id, call.service_name);
  if (!credential) throw errors.notFound(`Credential for service '${call.service_name}' not found`);
  if (!credential.allowed_hosts.includes(host)) {
    throw errors.forbidden(`Host '${host}' is not in the allowed_hosts of service '${call.service_name}'`);
  }
  const secret = deps.keyring.decrypt(credential.value_enc, credentialContext(credential));
  const header = credentialHeader(credential, secret);
  const forms = secretForms(secret);
  try {
    const res = await deps.outbound.request({
      url: call.url, method: call.method, headers: injectCredential(call.headers ?? {}, header), body: call.body ?? null,
    });
    attempt.statusCode = res.statusCode;
    const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, redact(v, forms)]));
    return { status_code: res.statusCode, headers, body: redact(res.body.toString('utf8'), forms) };
  } catch (err) {
    if (err instanceof OutboundError) throw outboundToAppError(err);
    throw err;
  }
}

/** Appends the attempt to the request's audit trail; a lost audit write is logged, never the cause of a failure. */
async function record(deps: VaultDeps, agent: AgentPrincipal, requestId: string, entry: Omit<ExecutionRecord, 'agent' | 'request_id'>, ctx: RequestContext) {
  try {
    await deps.bus.request(actionsEndpoints.recordExecution, { agent, request_id: requestId, ...entry }, { requestId: ctx.requestId });
  } catch (err) {
    ctx.log.error({ action_id: requestId, err: toAppError(err).detail }, 'could not audit a vault execution');
  }
}

/** POST /vault/execute/{id}: claim the approved request once (actions), make the call, audit the attempt. */
export function executeHandlers(deps: VaultDeps): BoundHandler[] {
  return [
    handle(ep.execute, async ({ agent, request_id }, ctx) => {
      const claim = await deps.bus.request(actionsEndpoints.claimExecution, { agent, request_id }, { requestId: ctx.requestId });
      const started = performance.now();
      const attempt: Attempt = { targetHost: null, statusCode: null };
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const result = await makeCall(deps, claim, attempt);
        await record(deps, agent, request_id, {
          outcome: 'succeeded', target_host: attempt.targetHost, status_code: result.status_code, error_status: null, detail: null, latency_ms: elapsed(),
        }, ctx);
        ctx.log.info({ action_id: request_id, target_host: attempt.targetHost, status_code: result.status_code, latency_ms: elapsed() }, 'vault call executed');
        return result;
      } catch (err) {
        const failure = toAppError(err);
        await record(deps, agent, request_id, {
          outcome: failure.status === 502 ? 'failed' : 'refused', target_host: attempt.targetHost, status_code: attempt.statusCode,
          error_status: failure.status, detail: failure.detail.slice(0, 500), latency_ms: elapsed(),
        }, ctx);
        ctx.log.warn({ action_id: request_id, target_host: attempt.targetHost, status: failure.status, detail: failure.detail }, 'vault call not executed');
        throw failure;
      }
    }),
  ];
}
