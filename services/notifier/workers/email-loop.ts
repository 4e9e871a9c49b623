import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { EmailStore } from '../store/emails.js';
import type { Emails } from '../use-cases/emails.js';

const BATCH = 20;
/** An attempt (connect, greeting, data) ends well within this; past it another notifier may take the email. */
const LEASE_SECONDS = 120;

/**
 * Sends queued emails: takes the due ones (skip locked, so every notifier process sends and each email goes once),
 * attempts each, and looks again every `pollMs` for retries that come due; woken at once when one is queued.
 */
export function startEmailLoop(input: { emails: Emails; store: EmailStore; pollMs: number; log: Logger }) {
  const { emails, store, log } = input;
  return startWakeLoop({
    pollMs: input.pollMs,
    pass: async () => {
      let due: Awaited<ReturnType<EmailStore['takeDue']>>;
      do {
        due = await store.takeDue(BATCH, LEASE_SECONDS);
        await Promise.all(due.map((email) => emails.attempt(email)));
      } while (due.length === BATCH);
    },
    onError: (err) => log.error({ err }, 'email pass failed'),
  });
}
