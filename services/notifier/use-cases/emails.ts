import type { ActionEvent, InviteEmailRequest } from '@agent-auth/contracts';
import type { Logger } from '@agent-auth/logging';
import type { Mailer } from '../adapters/mailer.js';
import { escalationEmail, inviteEmail, joinLink, requestLinkIn } from '../domain/email-messages.js';
import { withJitter } from '../domain/retry-policy.js';
import type { DueEmail, EmailStore } from '../store/emails.js';

/** What email needs: the queue, a way to send (null: email is off), the retry schedule and the app's origin. */
export interface EmailDeps {
  emails: EmailStore;
  mailer: Mailer | null;
  schedule: readonly number[];
  /** PUBLIC_BASE_URL's origin, where links into the device app point (escalations; invites without their own). */
  appOrigin: string | undefined;
  log: Logger;
  /** Told when an email is queued, so the sending loop looks at once. */
  queued: () => void;
}

const amountText = (amount: number | null, currency: string) =>
  amount === null ? null : new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);

/**
 * Invites and escalations by email: each is queued (a row per email, keyed by what it is for, so a cause delivered
 * twice sends once) and sent by the loop, retried on EMAIL_RETRY_SCHEDULE. Nothing here waits for an SMTP server:
 * a decision or an invite never waits for email.
 */
export function createEmails(deps: EmailDeps) {
  const { emails, log } = deps;
  const enqueue = async (email: Parameters<EmailStore['enqueue']>[0]) => {
    const added = await emails.enqueue(email);
    if (added) deps.queued();
    return added;
  };
  return {
    enabled: deps.mailer !== null,

    /** An invite's email, with the join link (the code never goes to a log). */
    async queueInvite(invite: InviteEmailRequest): Promise<{ queued: boolean }> {
      if (!deps.mailer) return { queued: false };
      const link = joinLink(deps.appOrigin ?? invite.app_origin, invite.code);
      const message = inviteEmail({ name: invite.name, link, expires_at: invite.expires_at });
      const queued = await enqueue({ id: `invite:${invite.member_id}`, kind: 'invite', to: invite.to, ...message });
      log.info({ member_id: invite.member_id, queued }, 'invite email queued');
      return { queued };
    },

    /** The escalation's email to each member it went to who has an email address. */
    async queueEscalation(event: ActionEvent): Promise<void> {
      if (!deps.mailer || !event.escalation) return;
      if (!deps.appOrigin) log.warn('escalation email without PUBLIC_BASE_URL: its link is a path, not a URL');
      const link = requestLinkIn(deps.appOrigin ?? '', event.action.id);
      const { action } = event;
      for (const member of event.escalation.members) {
        if (!member.email) continue;
        const message = escalationEmail({
          name: member.name,
          title: action.title,
          amount: amountText(action.amount, action.currency),
          link,
        });
        await enqueue({
          id: `escalation:${event.id}:${member.member_id}`,
          kind: 'escalation',
          to: member.email,
          ...message,
        });
      }
    },

    /** One attempt of a due email: gone once the server took it (or given up), else tried again later. */
    async attempt(email: DueEmail): Promise<void> {
      const { to, subject, text, html } = email;
      const result = await deps.mailer!({ to, subject, text, html }).catch((err: unknown) => ({
        sent: false as const,
        detail: err instanceof Error ? err.message : String(err),
      }));
      if (result.sent) {
        await emails.remove(email.id);
        log.info({ email_id: email.id, kind: email.kind, attempt: email.attempts }, 'email sent');
        return;
      }
      // Retried schedule[n - 1] seconds after attempt n (with jitter), until the schedule is used up.
      const delay = deps.schedule[email.attempts - 1];
      if (delay === undefined) {
        await emails.remove(email.id);
        log.error({ email_id: email.id, kind: email.kind, attempts: email.attempts }, 'email given up');
        return;
      }
      const at = new Date(Date.now() + Math.round(withJitter(delay, Math.random) * 1000));
      await emails.retryAt(email.id, at, result.detail);
      log.warn({ email_id: email.id, attempt: email.attempts, retry_at: at, reason: result.detail }, 'email not sent');
    },
  };
}
export type Emails = ReturnType<typeof createEmails>;
