import type { Sql } from '@agent-auth/db';
import type { EmailMessage } from '../domain/email-messages.js';

/** An email to send: what it is for (its id), its kind and its recipient. */
export interface QueuedEmail extends EmailMessage {
  id: string;
  kind: 'invite' | 'escalation';
  to: string;
}

/** An email taken for an attempt. */
export interface DueEmail extends QueuedEmail {
  attempts: number;
}

/** The emails waiting to go out (migration 003): queued, taken for an attempt, sent or tried again later. */
export function createEmailStore(sql: Sql) {
  return {
    /** Queues an email unless one with its id was queued already (a cause delivered again); true when queued. */
    async enqueue(email: QueuedEmail): Promise<boolean> {
      const rows = await sql`
        insert into notifier.emails (id, kind, to_address, subject, text_body, html_body)
        values (${email.id}, ${email.kind}, ${email.to}, ${email.subject}, ${email.text}, ${email.html})
        on conflict (id) do nothing returning id`;
      return rows.length === 1;
    },

    /**
     * Takes up to `batch` due emails for `leaseSeconds` (skip locked: every notifier process sends, each email by
     * one); a process that dies mid-attempt leaves them to be taken again after the lease.
     */
    async takeDue(batch: number, leaseSeconds: number): Promise<DueEmail[]> {
      return sql<DueEmail[]>`
        update notifier.emails e set next_attempt_at = now() + make_interval(secs => ${leaseSeconds}),
          attempts = e.attempts + 1
        from (select id from notifier.emails where next_attempt_at <= now() order by next_attempt_at
              limit ${batch} for update skip locked) due
        where e.id = due.id
        returning e.id, e.kind, e.to_address as "to", e.subject, e.text_body as text, e.html_body as html, e.attempts`;
    },

    /** The email is out (or given up): its row goes, and with it any link it carried. */
    async remove(id: string): Promise<void> {
      await sql`delete from notifier.emails where id = ${id}`;
    },

    /** Tries the email again at `at`, noting why this attempt failed. */
    async retryAt(id: string, at: Date, error: string): Promise<void> {
      await sql`update notifier.emails set next_attempt_at = ${at}, last_error = ${error} where id = ${id}`;
    },
  };
}
export type EmailStore = ReturnType<typeof createEmailStore>;
