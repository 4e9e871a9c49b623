import type { Sql } from '@agent-auth/db';

export interface DeliveryRow {
  webhook_id: string;
  request_id: string;
  account_id: string;
  agent_id: string;
  callback_url: string;
  body: string;
  attempts: number;
  first_attempt_at: Date;
}

export interface AttemptRecord {
  webhook_id: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  outcome: 'delivered' | 'retrying' | 'failed';
  next_attempt_at: Date | null;
}

export interface UnauditedAttempt extends Omit<AttemptRecord, 'next_attempt_at'> {
  id: string;
  request_id: string;
  next_attempt_at: Date | null;
}

/** Persistence of webhook delivery jobs and their attempts. */
export function createDeliveryStore(sql: Sql) {
  return {
    /**
     * Deletes up to `batch` deliveries finished before `olderThan` whose attempts have all reached the request's
     * audit trail, with those attempts; returns how many deliveries went.
     */
    async pruneFinished(olderThan: Date, batch: number): Promise<number> {
      const rows = await sql`
        with gone as (
          select d.webhook_id from notifier.deliveries d
          where d.state <> 'pending' and d.finished_at < ${olderThan}
            and not exists (select 1 from notifier.attempts a where a.webhook_id = d.webhook_id and a.audited_at is null)
          order by d.finished_at
          limit ${batch}
        ), attempts as (
          delete from notifier.attempts where webhook_id in (select webhook_id from gone)
        )
        delete from notifier.deliveries where webhook_id in (select webhook_id from gone) returning webhook_id`;
      return rows.length;
    },

    /** Records a delivery job; false when the event was seen before (events may arrive more than once). */
    async add(job: Omit<DeliveryRow, 'attempts' | 'first_attempt_at'>): Promise<boolean> {
      const rows = await sql`
        insert into notifier.deliveries (webhook_id, request_id, account_id, agent_id, callback_url, body)
        values (${job.webhook_id}, ${job.request_id}, ${job.account_id}, ${job.agent_id}, ${job.callback_url}, ${job.body})
        on conflict (webhook_id) do nothing returning webhook_id`;
      return rows.length === 1;
    },

    /**
     * Records a delivery job already claimed for its first attempt by this process (the fast path: no claim query
     * between the event and the POST); undefined when the event was seen before.
     */
    async addClaimed(
      job: Omit<DeliveryRow, 'attempts' | 'first_attempt_at'>,
      leaseSeconds: number,
    ): Promise<DeliveryRow | undefined> {
      const [row] = await sql<DeliveryRow[]>`
        insert into notifier.deliveries (webhook_id, request_id, account_id, agent_id, callback_url, body, attempts, first_attempt_at, last_attempt_at, next_attempt_at)
        values (${job.webhook_id}, ${job.request_id}, ${job.account_id}, ${job.agent_id}, ${job.callback_url}, ${job.body}, 1, now(), now(),
          now() + make_interval(secs => ${leaseSeconds}))
        on conflict (webhook_id) do nothing
        returning webhook_id, request_id, account_id, agent_id, callback_url, body, attempts, first_attempt_at`;
      return row;
    },

    /**
     * Takes up to `batch` due jobs for one attempt each: counts the attempt and pushes the due time past the
     * attempt's longest duration, so a notifier that dies mid-attempt leaves the job to be taken over then.
     */
    async claimDue(batch: number, leaseSeconds: number): Promise<DeliveryRow[]> {
      return sql<DeliveryRow[]>`
        update notifier.deliveries d set attempts = d.attempts + 1, last_attempt_at = now(),
          first_attempt_at = coalesce(d.first_attempt_at, now()),
          next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
        from (
          select webhook_id from notifier.deliveries where state = 'pending' and next_attempt_at <= now()
          order by next_attempt_at limit ${batch} for update skip locked
        ) due
        where d.webhook_id = due.webhook_id
        returning d.webhook_id, d.request_id, d.account_id, d.agent_id, d.callback_url, d.body, d.attempts, d.first_attempt_at`;
    },

    /** Records an attempt and moves the job on (delivered, failed, or due again), in one statement. */
    async recordAttempt(a: AttemptRecord): Promise<string> {
      const state = a.outcome === 'retrying' ? 'pending' : a.outcome;
      const [row] = await sql<Array<{ id: string }>>`
        with moved as (
          update notifier.deliveries set state = ${state},
            next_attempt_at = coalesce(${a.next_attempt_at}::timestamptz, next_attempt_at),
            finished_at = case when ${state} = 'pending' then null else now() end
          where webhook_id = ${a.webhook_id}
        )
        insert into notifier.attempts (webhook_id, attempt, status_code, latency_ms, error, outcome, next_attempt_at)
        values (${a.webhook_id}, ${a.attempt}, ${a.status_code}, ${a.latency_ms}, ${a.error}, ${a.outcome}, ${a.next_attempt_at})
        on conflict (webhook_id, attempt) do update set status_code = excluded.status_code
        returning id`;
      return row!.id;
    },

    /** Gives an attempt back without counting it (e.g. it could not be signed): due again after `delaySeconds`. */
    async postpone(webhookId: string, delaySeconds: number): Promise<void> {
      await sql`update notifier.deliveries set attempts = attempts - 1, next_attempt_at = now() + make_interval(secs => ${delaySeconds})
                where webhook_id = ${webhookId}`;
    },

    async markAudited(ids: string[]): Promise<void> {
      if (ids.length) await sql`update notifier.attempts set audited_at = now() where id = any(${ids})`;
    },

    /** Attempts not yet in the request's audit trail (reporting failed), oldest first. */
    async unaudited(olderThanSeconds: number, batch: number): Promise<UnauditedAttempt[]> {
      return sql<UnauditedAttempt[]>`
        select a.id, d.request_id, a.webhook_id, a.attempt, a.status_code, a.latency_ms, a.error, a.outcome, a.next_attempt_at
        from notifier.attempts a join notifier.deliveries d using (webhook_id)
        where a.audited_at is null and a.at < now() - make_interval(secs => ${olderThanSeconds})
        order by a.id limit ${batch}`;
    },

    /** Every attempt of one webhook, in order (for tests and operators). */
    async attemptsOf(webhookId: string) {
      return sql`select attempt, status_code, latency_ms, error, outcome, at from notifier.attempts where webhook_id = ${webhookId} order by attempt`;
    },
  };
}
export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
