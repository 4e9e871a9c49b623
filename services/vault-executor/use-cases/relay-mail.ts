import type { MailRequest, MailResult } from '@agent-auth/contracts';
import type { SmtpSender } from '@agent-auth/outbound';

/**
 * Sends another service's email (the notifier's invites and escalations) through the SMTP server of SMTP_URL: the
 * vault executor is the system's only door out, for mail as for HTTP. Without SMTP_URL here, nothing is sent and
 * the notifier is told why (it tries again later).
 */
export function createMailRelay(deps: { sender: SmtpSender | null }) {
  return async (mail: MailRequest): Promise<MailResult> => {
    if (!deps.sender) return { sent: false, detail: 'the vault executor has no SMTP_URL' };
    return deps.sender.send(mail);
  };
}
