import type { Sql } from '@agent-auth/db';

/** A row of actions.passkeys as postgres.js returns it. */
export interface PasskeyRow {
  id: string;
  account_id: string;
  device_ref: string;
  credential_id: string;
  public_key: Buffer;
  sign_count: string; // bigint arrives as text
  transports: string[];
  rp_id: string;
  created_at: Date;
  last_used_at: Date | null;
}

// An accepted assertion is remembered a while longer than a signed timestamp is accepted (300 s either way).
const ASSERTION_MEMORY = '15 minutes';

/** Persistence of devices' passkeys, their registration challenges and the assertions they have made. */
export function createPasskeyStore(sql: Sql) {
  return {
    /** Keeps a registration challenge for a device (single use, until expiry); drops the device's expired ones. */
    async saveChallenge(deviceRef: string, challenge: string, rpId: string, ttlSeconds: number): Promise<void> {
      await sql`delete from actions.webauthn_challenges where device_ref = ${deviceRef} and expires_at <= now()`;
      await sql`insert into actions.webauthn_challenges (challenge, device_ref, rp_id, expires_at)
                values (${challenge}, ${deviceRef}, ${rpId}, now() + make_interval(secs => ${ttlSeconds}))`;
    },

    /** Uses up a device's live registration challenge; its rp id, or undefined when unknown, used or expired. */
    async takeChallenge(deviceRef: string, challenge: string): Promise<{ rp_id: string } | undefined> {
      const [row] = await sql<Array<{ rp_id: string }>>`
        delete from actions.webauthn_challenges
        where challenge = ${challenge} and device_ref = ${deviceRef} and expires_at > now() returning rp_id`;
      return row;
    },

    /** Stores a verified passkey and its audit entry; undefined when the credential is already registered. */
    async add(
      passkey: Omit<PasskeyRow, 'created_at' | 'last_used_at' | 'sign_count'> & { sign_count: number },
      actor: string,
    ): Promise<PasskeyRow | undefined> {
      const [row] = await sql<PasskeyRow[]>`
        with added as (
          insert into actions.passkeys (id, account_id, device_ref, credential_id, public_key, sign_count, transports, rp_id)
          values (${passkey.id}, ${passkey.account_id}, ${passkey.device_ref}, ${passkey.credential_id}, ${passkey.public_key},
                  ${passkey.sign_count}, ${sql.json(passkey.transports)}, ${passkey.rp_id})
          on conflict (credential_id) do nothing
          returning *
        ), logged as (
          insert into actions.audit_events (account_id, event, actor, detail)
          select account_id, 'passkey_registered', ${actor}, jsonb_build_object('passkey_id', id, 'device_ref', device_ref) from added
        )
        select * from added`;
      return row;
    },

    /** The passkeys of one device, oldest first. */
    async forDevice(deviceRef: string): Promise<PasskeyRow[]> {
      return sql<PasskeyRow[]>`select * from actions.passkeys where device_ref = ${deviceRef} order by created_at, id`;
    },

    /** Whether a device has at least one passkey (then its approvals must be verified). */
    async deviceHasAny(deviceRef: string): Promise<boolean> {
      const [row] = await sql`select 1 from actions.passkeys where device_ref = ${deviceRef} limit 1`;
      return row !== undefined;
    },

    /** One passkey of a device by its credential id (as the authenticator names it). */
    async byCredential(deviceRef: string, credentialId: string): Promise<PasskeyRow | undefined> {
      const [row] = await sql<PasskeyRow[]>`
        select * from actions.passkeys where device_ref = ${deviceRef} and credential_id = ${credentialId}`;
      return row;
    },

    /** Removes a passkey of a device, with its audit entry; false when the device has no such passkey. */
    async remove(deviceRef: string, passkeyId: string, actor: string): Promise<boolean> {
      const rows = await sql`
        with removed as (
          delete from actions.passkeys where id = ${passkeyId} and device_ref = ${deviceRef} returning id, account_id, device_ref
        ), logged as (
          insert into actions.audit_events (account_id, event, actor, detail)
          select account_id, 'passkey_removed', ${actor}, jsonb_build_object('passkey_id', id, 'device_ref', device_ref) from removed
        )
        select id from removed`;
      return rows.length === 1;
    },

    /**
     * Accepts one verified assertion: raises the passkey's sign count (unless the authenticator keeps none: 0 and 0)
     * and remembers the assertion's challenge. False when a concurrent or earlier assertion got there first.
     */
    async acceptAssertion(
      passkeyId: string,
      newCount: number,
      challenge: string,
      callId: string | null,
    ): Promise<boolean> {
      return sql
        .begin(async (tx) => {
          const raised = await tx`
          update actions.passkeys set sign_count = ${newCount}, last_used_at = now()
          where id = ${passkeyId} and (sign_count < ${newCount} or (sign_count = 0 and ${newCount}::bigint = 0))
          returning id`;
          if (raised.length === 0) return false;
          await tx`delete from actions.passkey_assertions
                 where passkey_id = ${passkeyId} and at < now() - ${ASSERTION_MEMORY}::interval`;
          const remembered = await tx`
          insert into actions.passkey_assertions (passkey_id, challenge, call_id)
          values (${passkeyId}, ${challenge}, ${callId})
          on conflict do nothing returning passkey_id`;
          if (remembered.length === 0) throw new AssertionReplayed();
          return true;
        })
        .catch((err: unknown) => {
          if (err instanceof AssertionReplayed) return false;
          throw err;
        });
    },

    /** Whether this passkey's assertion over this challenge was accepted in this bus call (a send of it again). */
    async acceptedInCall(passkeyId: string, challenge: string, callId: string): Promise<boolean> {
      const rows = await sql`
        select 1 from actions.passkey_assertions
        where passkey_id = ${passkeyId} and challenge = ${challenge} and call_id = ${callId}`;
      return rows.length === 1;
    },
  };
}
export type PasskeyStore = ReturnType<typeof createPasskeyStore>;

// Thrown inside the transaction to roll back the raised count when the assertion was seen before.
class AssertionReplayed extends Error {}
