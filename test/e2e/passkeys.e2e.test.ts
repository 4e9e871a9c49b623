import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { decisionChallenge, softwarePasskey } from '../harness/software-passkey.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The claims of a receipt (compact JWS); its signature is checked by the receipts tests. */
const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`passkey approvals (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'passkeys' });
      // WebAuthn binds passkeys to a domain name: the app is reached as localhost, as a browser would.
      const base = new URL(stack.baseUrl);
      base.hostname = 'localhost';
      origin = base.origin;
      api = apiClient(base.href.replace(/\/$/, ''));
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    /** A new account whose device has registered one software passkey. */
    async function withPasskey() {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const passkey = softwarePasskey({ rpId: 'localhost', origin });
      const options = (await device.post('/device/passkeys/options')).body;
      const created = await device.post('/device/passkeys', passkey.register(options));
      expect(created.status).toBe(200);
      return { acct, device, passkey, passkeyId: created.body.passkey_id as string, agent: api.agent(acct.api_key) };
    }

    itBesideTheService(
      'offers creation options bound to the host, ES256 only, user verification required; registers, lists, deletes',
      async () => {
        const acct = await api.newAccount();
        const device = api.device(acct.device_id);
        const options = await device.post('/device/passkeys/options');
        expect(options.status).toBe(200);
        expect(options.body).toMatchObject({
          rp: { id: 'localhost' },
          pubKeyCredParams: [{ alg: -7, type: 'public-key' }],
          authenticatorSelection: { userVerification: 'required' },
          attestation: 'none',
        });
        expect(options.body.user.id).not.toContain(acct.device_id);
        const passkey = softwarePasskey({ rpId: 'localhost', origin });
        const registration = passkey.register(options.body);
        const created = await device.post('/device/passkeys', registration);
        expect(created.status).toBe(200);
        expect(created.body.passkey_id).toMatch(/^pk_/);
        expect(Date.parse(created.body.created_at)).not.toBeNaN();

        // The challenge is single use.
        const again = await device.post('/device/passkeys', registration);
        expect(again.status).toBe(403);
        expect(again.body).toMatchObject({
          code: 'passkey_registration_invalid',
          detail: expect.stringMatching(/live challenge/),
        });

        const listed = await device.get('/device/passkeys');
        expect(listed.body.passkeys).toEqual([
          expect.objectContaining({
            passkey_id: created.body.passkey_id,
            credential_id: passkey.id,
            last_used_at: null,
          }),
        ]);
        // The next options exclude the registered credential.
        expect((await device.post('/device/passkeys/options')).body.excludeCredentials).toEqual([
          expect.objectContaining({ id: passkey.id }),
        ]);
        // Another account's device sees none of them and cannot delete them.
        const other = api.device((await api.newAccount()).device_id);
        expect((await other.get('/device/passkeys')).body.passkeys).toEqual([]);
        expect((await other.delete(`/device/passkeys/${created.body.passkey_id}`)).status).toBe(404);
        expect((await device.delete(`/device/passkeys/${created.body.passkey_id}`)).body).toEqual({
          deleted: true,
          id: created.body.passkey_id,
        });
        expect((await device.get('/device/passkeys')).body.passkeys).toEqual([]);
        const audit =
          await db.sql`select event from actions.audit_events where account_id = ${acct.account_id} and event like 'passkey%' order by id`;
        expect(audit.map((r) => r.event)).toEqual(['passkey_registered', 'passkey_removed']);
      },
    );

    it('refuses a registration without user verification, from another origin, or with a malformed body', async () => {
      const device = api.device((await api.newAccount()).device_id);
      const passkey = softwarePasskey({ rpId: 'localhost', origin });
      const noUv = await device.post(
        '/device/passkeys',
        passkey.register((await device.post('/device/passkeys/options')).body, { userVerified: false }),
      );
      expect(noUv.status).toBe(403);
      expect(noUv.body.detail).toMatch(/verif/i);
      const elsewhere = await device.post(
        '/device/passkeys',
        passkey.register((await device.post('/device/passkeys/options')).body, { origin: 'https://evil.example' }),
      );
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.body.detail).toMatch(/origin/i);
      const malformed = await device.post('/device/passkeys', { id: 'x', type: 'public-key', response: {} });
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail).toMatch(/rawId|response/);
      expect((await device.get('/device/passkeys')).body.passkeys).toEqual([]);
    });

    itBesideTheService(
      'approves with a passkey assertion over the approval message: biometric, user_verified and passkey_id on the action and its audit event',
      async () => {
        const { acct, device, passkey, passkeyId, agent } = await withPasskey();
        const created = (await agent.post('/actions', { action_type: 'purchase', title: 'Buy a lamp', amount: 42.5 }))
          .body;
        const timestamp = now();
        const approved = await device.post(`/actions/${created.id}/approve`, {
          timestamp,
          webauthn: passkey.assert(decisionChallenge(created.id, 'approve', null, timestamp)),
        });
        expect(approved.status).toBe(200);
        expect(approved.body).toMatchObject({
          status: 'approved',
          resolved_by: 'biometric',
          user_verified: true,
          passkey_id: passkeyId,
        });
        expect((await agent.get(`/actions/${created.id}`)).body).toMatchObject({
          user_verified: true,
          passkey_id: passkeyId,
        });
        const [event] =
          await db.sql`select detail from actions.audit_events where request_id = ${created.id} and event = 'approved'`;
        expect(event!.detail).toMatchObject({ method: 'biometric', user_verified: true, passkey_id: passkeyId });
        // The receipt states it too.
        expect(claimsOf(approved.body.receipt)).toMatchObject({
          sub: created.id,
          status: 'approved',
          resolved_by: 'biometric',
          user_verified: true,
          passkey_id: passkeyId,
        });
        expect((await device.get('/device/passkeys')).body.passkeys[0].last_used_at).not.toBeNull();
        // An agent's own request never resolved by a passkey says so.
        const plain = (await agent.post('/actions', { action_type: 'social', title: 'Post' })).body;
        expect(plain).toMatchObject({ user_verified: false, passkey_id: null });
        expect(acct.account_id).toMatch(/^acc_/);
      },
    );

    it('denies with a passkey too; once a device has a passkey an unverified decision is refused', async () => {
      const { device, passkey, passkeyId, agent } = await withPasskey();
      const created = (await agent.post('/actions', { action_type: 'legal', title: 'Sign it' })).body;
      const bare = await device.post(`/actions/${created.id}/approve`, {});
      expect(bare.status).toBe(403);
      expect(bare.body).toMatchObject({ code: 'passkey_required', detail: expect.stringMatching(/passkey/) });
      expect((await device.post(`/actions/${created.id}/deny`, { reason: 'no' })).status).toBe(403);
      const timestamp = now();
      const denied = await device.post(`/actions/${created.id}/deny`, {
        reason: 'not now',
        timestamp,
        webauthn: passkey.assert(decisionChallenge(created.id, 'deny', null, timestamp)),
      });
      expect(denied.status).toBe(200);
      expect(denied.body).toMatchObject({
        status: 'denied',
        resolved_by: 'user',
        user_verified: true,
        passkey_id: passkeyId,
        reason: 'not now',
      });
      expect(claimsOf(denied.body.receipt)).toMatchObject({
        status: 'denied',
        user_verified: true,
        passkey_id: passkeyId,
      });
    });

    it("refuses assertions that do not verify: another decision or request, no user verification, stale timestamp, a sign count that does not grow, another device's passkey", async () => {
      const { device, passkey, agent } = await withPasskey();
      const created = (await agent.post('/actions', { action_type: 'purchase', title: 'Buy', amount: 5 })).body;
      const other = (await agent.post('/actions', { action_type: 'purchase', title: 'Buy more', amount: 6 })).body;
      const timestamp = now();
      const approve = (id: string, body: Record<string, unknown>) => device.post(`/actions/${id}/approve`, body);

      // Signed for deny, sent as approve; signed for one request, sent for another; timestamp changed.
      let r = await approve(created.id, {
        timestamp,
        webauthn: passkey.assert(decisionChallenge(created.id, 'deny', null, timestamp)),
      });
      expect([r.status, r.body.detail]).toEqual([403, expect.stringMatching(/challenge/)]);
      r = await approve(created.id, {
        timestamp,
        webauthn: passkey.assert(decisionChallenge(other.id, 'approve', null, timestamp)),
      });
      expect(r.status).toBe(403);
      const later = new Date(Date.now() + 5000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      r = await approve(created.id, {
        timestamp: later,
        webauthn: passkey.assert(decisionChallenge(created.id, 'approve', null, timestamp)),
      });
      expect(r.status).toBe(403);
      // Without user verification.
      r = await approve(created.id, {
        timestamp,
        webauthn: passkey.assert(decisionChallenge(created.id, 'approve', null, timestamp), { userVerified: false }),
      });
      expect([r.status, r.body.detail]).toEqual([403, expect.stringMatching(/verif/i)]);
      // Outside the 300 s window.
      const stale = new Date(Date.now() - 400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      r = await approve(created.id, {
        timestamp: stale,
        webauthn: passkey.assert(decisionChallenge(created.id, 'approve', null, stale)),
      });
      expect([r.status, r.body.detail]).toEqual([403, expect.stringMatching(/300 s/)]);
      // Without the timestamp beside it.
      r = await approve(created.id, {
        webauthn: passkey.assert(decisionChallenge(created.id, 'approve', null, timestamp)),
      });
      expect(r.status).toBe(403);

      // A valid assertion is accepted once: a second one with a count that did not grow is a replay.
      const good = passkey.assert(decisionChallenge(created.id, 'approve', null, timestamp));
      const replayed = passkey.assert(decisionChallenge(other.id, 'approve', null, timestamp), { counter: 1 });
      expect((await approve(created.id, { timestamp, webauthn: good })).status).toBe(200);
      r = await approve(other.id, { timestamp, webauthn: replayed });
      expect([r.status, r.body.detail]).toEqual([403, expect.stringMatching(/counter|replay|sign count/i)]);
      expect(r.body.code).toBe('passkey_assertion_invalid');
      // The very same assertion again on its (now approved) request: no longer pending.
      expect((await approve(created.id, { timestamp, webauthn: good })).status).toBe(409);

      // Another device's passkey is not this device's.
      const stranger = await withPasskey();
      r = await approve(other.id, {
        timestamp,
        webauthn: stranger.passkey.assert(decisionChallenge(other.id, 'approve', null, timestamp)),
      });
      expect([r.status, r.body.detail]).toEqual([403, expect.stringMatching(/not a passkey of this device/)]);
      // The malformed is a 400 naming the field.
      r = await approve(other.id, { timestamp, webauthn: { id: passkey.id, type: 'public-key' } });
      expect([r.status, r.body.detail]).toEqual([400, expect.stringMatching(/webauthn/)]);
      expect((await agent.get(`/actions/${other.id}`)).body.status).toBe('pending');
    });

    it('refuses passkeys where the app is not served from a domain name (an IP address cannot be an rp id)', async () => {
      const device = apiClient(stack.baseUrl).device((await api.newAccount()).device_id);
      const r = await device.post('/device/passkeys/options');
      expect([r.status, r.body.code, r.body.detail]).toEqual([
        400,
        'passkey_needs_domain',
        expect.stringMatching(/domain name/),
      ]);
    });
  });
}
