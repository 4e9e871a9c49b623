import type { CallOutcomeStore } from '@agent-auth/bus';
import type { ReplyEnvelope } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import { parseKeyring } from '@agent-auth/encryption';
import type { Logger } from '@agent-auth/logging';

/** How long a call's outcome is kept: far longer than any requester keeps sending it (BUS_TIMEOUT_MS, at most 2 min). */
const KEEP_SECONDS = 600;
/**
 * How long a send again waits for the outcome of a replica that took the call and is still connected to the
 * database (alive, at work: a vault call, a starved process); past it, it serves the call itself.
 */
const LIVE_HOLDER_WAIT_MS = 30_000;
/** The same for a call taken before its holder was recorded (a replica of the previous version). */
const UNKNOWN_HOLDER_WAIT_MS = 1500;
const POLL_MS = 50;
const SWEEP_MS = 60_000;

/** A call's row as a send again reads it: the outcome, if kept, and whether the replica that took it is still there. */
interface CallState {
  outcome: ReplyEnvelope | { sealed: string } | null;
  holder_pid: number | null;
  holder_alive: boolean;
}

/** A call's outcome sealed with the call's key (AES-256-GCM, libs/encryption), bound to the call. */
function sealer(callId: string, key: string) {
  const ring = parseKeyring(`call:${key}`);
  const context = `call_outcome:${callId}`;
  return {
    seal: (outcome: ReplyEnvelope) => ({ sealed: ring.encrypt(JSON.stringify(outcome), context) }),
    open: (sealed: string) => JSON.parse(ring.decrypt(sealed, context)) as ReplyEnvelope,
  };
}

/**
 * The outcomes of a service's effects per bus call, in a table of the service's own schema that the scaffold keeps
 * (like schema_migrations, made here under the same lock as the migrations rather than by a numbered file of each
 * service): taken before the effect, kept before the answer, dropped after KEEP_SECONDS. A confidential endpoint's
 * outcome is kept sealed with the call's key, which only its requester holds: once the call is over, not even the
 * database and the service's keys together can read it. The row names the database backend that took the call: a
 * send again whose holder's backend is gone (its process died, or the database restarted) serves the call at once
 * instead of waiting for an outcome that cannot come.
 */
export async function createCallOutcomes(
  sql: Sql,
  schema: string,
  log: Logger,
): Promise<CallOutcomeStore & { stop(): void }> {
  const table = `${schema}.call_outcomes`;
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`;
    await tx.unsafe(`create table if not exists ${table} (
      call_id text primary key,
      endpoint text not null,
      outcome jsonb,
      expires_at timestamptz not null)`);
    await tx.unsafe(`alter table ${table} add column if not exists holder_pid int`);
  });
  const sweep = setInterval(() => {
    sql`delete from ${sql(table)} where expires_at < now()`.catch((err: unknown) =>
      log.warn({ err }, 'call outcomes clean-up failed'),
    );
  }, SWEEP_MS);
  sweep.unref();

  const stateOf = async (callId: string): Promise<CallState | undefined> => {
    const [row] = await sql<CallState[]>`
      select outcome, holder_pid,
        case when holder_pid is null then true
          else exists (select 1 from pg_stat_get_activity(holder_pid)) end as holder_alive
      from ${sql(table)} where call_id = ${callId}`;
    return row;
  };
  /** Takes over a call whose holder is gone; false when another send took it over first. */
  const takeOver = async (callId: string, holderPid: number | null) => {
    const taken = await sql`
      update ${sql(table)} set holder_pid = pg_backend_pid()
      where call_id = ${callId} and outcome is null and holder_pid is not distinct from ${holderPid}
      returning call_id`;
    return taken.length === 1;
  };
  const opened = (callId: string, outcome: NonNullable<CallState['outcome']>, key: string | undefined) => {
    if (!('sealed' in outcome)) return outcome;
    if (!key) return undefined;
    try {
      return sealer(callId, key).open(outcome.sealed);
    } catch {
      log.warn({ callId }, 'a kept outcome could not be opened with the key of its call');
      return undefined;
    }
  };

  return {
    async take(callId, endpoint) {
      const taken = await sql`
        insert into ${sql(table)} (call_id, endpoint, expires_at, holder_pid)
        values (${callId}, ${endpoint}, now() + make_interval(secs => ${KEEP_SECONDS}), pg_backend_pid())
        on conflict (call_id) do nothing
        returning call_id`;
      return taken.length === 1;
    },
    async awaitOutcome(callId, key) {
      const started = performance.now();
      for (;;) {
        const state = await stateOf(callId);
        // Given back (the first failed without an answer of its own): serve it here.
        if (!state) return undefined;
        if (state.outcome) return opened(callId, state.outcome, key);
        if (!state.holder_alive && (await takeOver(callId, state.holder_pid))) return undefined;
        const waitMs = state.holder_pid === null ? UNKNOWN_HOLDER_WAIT_MS : LIVE_HOLDER_WAIT_MS;
        if (performance.now() - started >= waitMs) return undefined;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async keep(callId, outcome, key) {
      const kept = key ? sealer(callId, key).seal(outcome) : outcome;
      await sql`update ${sql(table)} set outcome = ${sql.json(kept as never)} where call_id = ${callId}`;
    },
    async forget(callId) {
      await sql`delete from ${sql(table)} where call_id = ${callId}`;
    },
    stop() {
      clearInterval(sweep);
    },
  };
}
