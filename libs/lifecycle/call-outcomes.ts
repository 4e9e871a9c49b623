import type { CallOutcomeStore } from '@agent-auth/bus';
import type { ReplyEnvelope } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';

/** How long a call's outcome is kept: far longer than any requester keeps sending it (BUS_TIMEOUT_MS, at most 2 min). */
const KEEP_SECONDS = 600;
/** How long a send again waits for the outcome of the replica that took the call, before it serves the call itself. */
const AWAIT_MS = 1500;
const POLL_MS = 50;
const SWEEP_MS = 60_000;

/**
 * The outcomes of a service's effects per bus call, in a table of the service's own schema that the scaffold keeps
 * (like schema_migrations, made here under the same lock as the migrations rather than by a numbered file of each
 * service): taken before the effect, kept before the answer, dropped after KEEP_SECONDS.
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
  });
  const sweep = setInterval(() => {
    sql`delete from ${sql(table)} where expires_at < now()`.catch((err: unknown) =>
      log.warn({ err }, 'call outcomes clean-up failed'),
    );
  }, SWEEP_MS);
  sweep.unref();

  const outcomeOf = async (callId: string): Promise<ReplyEnvelope | null | undefined> => {
    const [row] = await sql<Array<{ outcome: ReplyEnvelope | null }>>`
      select outcome from ${sql(table)} where call_id = ${callId}`;
    return row ? row.outcome : undefined;
  };

  return {
    async take(callId, endpoint) {
      const taken = await sql`
        insert into ${sql(table)} (call_id, endpoint, expires_at)
        values (${callId}, ${endpoint}, now() + make_interval(secs => ${KEEP_SECONDS}))
        on conflict (call_id) do nothing
        returning call_id`;
      return taken.length === 1;
    },
    async awaitOutcome(callId) {
      for (const until = performance.now() + AWAIT_MS; ; ) {
        const outcome = await outcomeOf(callId);
        if (outcome) return outcome;
        // Given back (the first failed without an answer of its own): serve it here.
        if (outcome === undefined || performance.now() >= until) return undefined;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async keep(callId, outcome) {
      await sql`update ${sql(table)} set outcome = ${sql.json(outcome as never)} where call_id = ${callId}`;
    },
    async forget(callId) {
      await sql`delete from ${sql(table)} where call_id = ${callId}`;
    },
    stop() {
      clearInterval(sweep);
    },
  };
}
