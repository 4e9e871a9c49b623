import type { Bus } from '@agent-auth/bus';
import { type MailRequest, type MailResult, vaultEndpoints } from '@agent-auth/contracts';

/** Sends one email; answers whether the SMTP server took it. */
export type Mailer = (mail: MailRequest) => Promise<MailResult>;

/** A relayed email's reply may take the SMTP exchange's own time (connect, greeting, data) and the hop. */
const RELAY_TIMEOUT_MS = 30_000;

/** The vault executor sends (OUTBOUND_VIA=vault-executor): the SMTP server and its password are its own. */
export function relayedMailer(bus: Bus): Mailer {
  return (mail) => bus.request(vaultEndpoints.relayMail, mail, { timeoutMs: RELAY_TIMEOUT_MS });
}
