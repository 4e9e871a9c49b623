import nodemailer from 'nodemailer';

/** One email: to one person, in plain text and HTML. */
export interface SmtpMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Whether the SMTP server took the email; `detail` says why not, without the URL or its password. */
export type SmtpOutcome = { sent: true; message_id: string } | { sent: false; detail: string };

/** Connecting, the server's greeting, and each exchange after: a server that hangs fails the attempt. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/** The reason of a failed send, with anything that looks like the SMTP URL's credentials taken out. */
function reasonOf(err: unknown, url: URL): string {
  const message = err instanceof Error ? err.message : String(err);
  const password = decodeURIComponent(url.password);
  const scrubbed = password ? message.split(password).join('***') : message;
  return scrubbed.slice(0, 500);
}

/**
 * Sends email through the SMTP server of `url` (smtp://user:pass@host:587, STARTTLS when the server offers it;
 * smtps:// for TLS from the start), from `from`. nodemailer speaks SMTP; one connection per email, as emails here
 * are few (invites, escalations).
 */
export function createSmtpSender(input: { url: string; from: string }) {
  const url = new URL(input.url);
  const transport = nodemailer.createTransport({ url: input.url, ...TIMEOUTS });
  return {
    async send(mail: SmtpMail): Promise<SmtpOutcome> {
      try {
        const info = await transport.sendMail({ from: input.from, ...mail });
        return { sent: true, message_id: String(info.messageId ?? '') };
      } catch (err) {
        return { sent: false, detail: reasonOf(err, url) };
      }
    },
    close(): void {
      transport.close();
    },
  };
}
export type SmtpSender = ReturnType<typeof createSmtpSender>;
