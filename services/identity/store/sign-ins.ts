import type { Sql } from '@agent-auth/db';

/** A sign-in under way, as started. */
export interface SignInRow {
  state_hash: string;
  binding_hash: string;
  nonce: string;
  code_verifier: string;
  redirect_uri: string;
  device_name: string | null;
  expires_at: Date;
}

/** A finished sign-in waiting for the device app to redeem it. */
export interface TicketRow {
  email: string;
  device_name: string | null;
}

/** Sign-ins with the company's OpenID provider, and their tickets: short-lived, each taken once. */
export function createSignInStore(sql: Sql) {
  return {
    async insert(row: SignInRow): Promise<void> {
      await sql`
        insert into identity.oidc_sign_ins
          (state_hash, binding_hash, nonce, code_verifier, redirect_uri, device_name, expires_at)
        values (${row.state_hash}, ${row.binding_hash}, ${row.nonce}, ${row.code_verifier}, ${row.redirect_uri},
                ${row.device_name}, ${row.expires_at})`;
    },

    /** Takes a sign-in by its state: deleted as it is read, so of two callbacks with one state only one finds it. */
    async take(stateHash: string): Promise<(SignInRow & { expired: boolean }) | undefined> {
      const [row] = await sql<Array<SignInRow & { expired: boolean }>>`
        delete from identity.oidc_sign_ins where state_hash = ${stateHash}
        returning *, expires_at <= now() as expired`;
      return row;
    },

    async insertTicket(row: TicketRow & { ticket_hash: string; expires_at: Date }): Promise<void> {
      await sql`
        insert into identity.oidc_tickets (ticket_hash, email, device_name, expires_at)
        values (${row.ticket_hash}, ${row.email}, ${row.device_name}, ${row.expires_at})`;
    },

    /** Takes a ticket still valid, once. */
    async takeTicket(ticketHash: string): Promise<TicketRow | undefined> {
      const [row] = await sql<TicketRow[]>`
        with taken as (delete from identity.oidc_tickets where ticket_hash = ${ticketHash} returning *)
        select email, device_name from taken where expires_at > now()`;
      return row;
    },

    /** Deletes what expired; the number deleted. */
    async prune(): Promise<number> {
      const a = await sql`delete from identity.oidc_sign_ins where expires_at < now()`;
      const b = await sql`delete from identity.oidc_tickets where expires_at < now()`;
      return a.count + b.count;
    },
  };
}
export type SignInStore = ReturnType<typeof createSignInStore>;
