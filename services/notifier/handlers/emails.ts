import { type BoundHandler, handle } from '@agent-auth/bus';
import { notifierEndpoints as ep } from '@agent-auth/contracts';
import type { Emails } from '../use-cases/emails.js';

/** Invites by email, on the bus (the actions service asks once a member with an email is invited). */
export function emailHandlers(emails: Emails): BoundHandler[] {
  return [handle(ep.emailInvite, (invite) => emails.queueInvite(invite))];
}
