import { webcrypto } from 'node:crypto';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentAuthClient, QuotaExceededError } from '@agent-auth/client';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
const purchase = { action_type: 'purchase', title: 'Buy a book', amount: 12.5 };
const subtle = webcrypto.subtle;

/** A device key as a browser makes it: WebCrypto P-256, the public half exported as JWK. */
async function webCryptoDevice() {
  const keys = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const jwk = await subtle.exportKey('jwk', keys.publicKey);
  return {
    publicKey: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    async sign(
      id: string,
      decision: 'approve' | 'deny',
      contentHash: string | null,
      timestamp = new Date().toISOString(),
    ) {
      const message = ['aa-approval-v1', id, decision, contentHash ?? '', timestamp].join('\n');
      const sig = await subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        keys.privateKey,
        new TextEncoder().encode(message),
      );
      return { signature: Buffer.from(sig).toString('base64url'), timestamp };
    },
  };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`device trust and plan quota (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      // The default free quota; rate limits stay generous (the harness default) in this file.
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'device-trust',
        env: { FREE_PLAN_MONTHLY_ACTIONS: '25' },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    async function pendingAction(agentKey: string, body: Record<string, unknown> = purchase): Promise<string> {
      const r = await api.agent(agentKey).post('/actions', body);
      expect(r.status).toBe(200);
      return r.body.id as string;
    }

    it('enrols TOTP once (409 the second time) and approves with a real otplib code; resolved_by totp', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const enrolled = await device.post('/totp/enroll');
      expect(enrolled.status).toBe(200);
      expect(enrolled.body.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(enrolled.body.otpauth_url).toContain(`secret=${enrolled.body.secret}`);
      const again = await device.post('/totp/enroll');
      expect(again.status).toBe(409);
      expect(again.body.detail).toBe('TOTP already configured');

      const id = await pendingAction(acct.api_key);
      const code = await generate({ secret: enrolled.body.secret });
      const approved = await device.post(`/actions/${id}/approve`, { totp_code: code });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ id, status: 'approved', resolved_by: 'totp' });
      expect((await api.agent(acct.api_key).get(`/actions/${id}`)).body.resolved_by).toBe('totp');

      // The same code again, on another request: refused, and that request stays pending.
      const second = await pendingAction(acct.api_key);
      const reused = await device.post(`/actions/${second}/approve`, { totp_code: code });
      expect(reused.status).toBe(403);
      expect(reused.body.detail).toMatch(/already used/);
      const wrong = await device.post(`/actions/${second}/approve`, {
        totp_code: code === '000000' ? '000001' : '000000',
      });
      expect(wrong.status).toBe(403);
      expect(wrong.body.detail).toBe('Invalid TOTP code');
      expect((await api.agent(acct.api_key).get(`/actions/${second}`)).body.status).toBe('pending');
    });

    it('one code sent by two concurrent approvals is accepted exactly once', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const { secret } = (await device.post('/totp/enroll')).body;
      const [a, b] = [await pendingAction(acct.api_key), await pendingAction(acct.api_key)];
      // The next step's code (accepted through the ±1 step drift) has never been used.
      const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
      const results = await Promise.all([
        device.post(`/actions/${a}/approve`, { totp_code: code }),
        device.post(`/actions/${b}/approve`, { totp_code: code }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
      expect(results.find((r) => r.status === 403)!.body.detail).toMatch(/already used/);
    });

    it('a TOTP code without enrolment is 403; wrong guesses are throttled (even a right code then waits)', async () => {
      const plain = await api.newAccount();
      const r = await api
        .device(plain.device_id)
        .post(`/actions/${await pendingAction(plain.api_key)}/approve`, { totp_code: '123456' });
      expect(r.status).toBe(403);
      expect(r.body.detail).toBe('TOTP is not configured for this account');

      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const { secret } = (await device.post('/totp/enroll')).body;
      const id = await pendingAction(acct.api_key);
      const right = await generate({ secret });
      const wrongCode = right === '111111' ? '222222' : '111111';
      const guesses = await Promise.all(
        Array.from({ length: 8 }, () => device.post(`/actions/${id}/approve`, { totp_code: wrongCode })),
      );
      expect(guesses.every((g) => g.status === 403)).toBe(true);
      expect(guesses.filter((g) => g.body.detail === 'Invalid TOTP code')).toHaveLength(5);
      expect(guesses.filter((g) => /locked .* for \d+ s/.test(g.body.detail))).toHaveLength(3);
      const locked = await device.post(`/actions/${id}/approve`, { totp_code: right });
      expect(locked.status).toBe(403);
      expect(locked.body.detail).toMatch(/Too many wrong TOTP codes/);
      // Biometric approval is not affected by the TOTP lock.
      expect((await device.post(`/actions/${id}/approve`)).body.resolved_by).toBe('biometric');
    });

    it('wallet_pay approves a request with an amount; 400 for one without', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const paid = await device.post(`/actions/${await pendingAction(acct.api_key)}/approve`, {
        payment_method: 'wallet_pay',
      });
      expect(paid.status).toBe(200);
      expect(paid.body.resolved_by).toBe('wallet_pay');
      const noAmount = await pendingAction(acct.api_key, { action_type: 'communication', title: 'Send mail' });
      const refused = await device.post(`/actions/${noAmount}/approve`, { payment_method: 'wallet_pay' });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^payment_method: /);
      const bad = await device.post(`/actions/${noAmount}/approve`, { payment_method: 'card' });
      expect(bad.status).toBe(400);
    });

    it('a device with a key must sign: WebCrypto-signed approve and deny pass, missing/tampered/stale ones are 403', async () => {
      const phone = await webCryptoDevice();
      const acct = await api.newAccount({ device_name: 'phone', public_key: phone.publicKey });
      const device = api.device(acct.device_id);

      const id = await pendingAction(acct.api_key);
      const unsigned = await device.post(`/actions/${id}/approve`);
      expect(unsigned.status).toBe(403);
      expect(unsigned.body.detail).toMatch(/signature and timestamp are required/);
      const forOther = await device.post(
        `/actions/${id}/approve`,
        await phone.sign('act_someotherrequest', 'approve', null),
      );
      expect(forOther.status).toBe(403);
      expect(forOther.body.detail).toMatch(/does not verify/);
      const asDeny = await device.post(`/actions/${id}/approve`, await phone.sign(id, 'deny', null));
      expect(asDeny.status).toBe(403);
      const tampered = await phone.sign(id, 'approve', null);
      const flipped = Buffer.from(tampered.signature, 'base64url');
      flipped[10] ^= 1;
      expect(
        (await device.post(`/actions/${id}/approve`, { ...tampered, signature: flipped.toString('base64url') })).status,
      ).toBe(403);
      expect(
        (
          await device.post(`/actions/${id}/approve`, {
            ...tampered,
            timestamp: new Date(Date.now() + 1000).toISOString(),
          })
        ).status,
      ).toBe(403);
      const stale = await device.post(
        `/actions/${id}/approve`,
        await phone.sign(id, 'approve', null, new Date(Date.now() - 301_000).toISOString()),
      );
      expect(stale.status).toBe(403);
      expect(stale.body.detail).toMatch(/in the past; it must be within 300 s/);
      expect((await api.agent(acct.api_key).get(`/actions/${id}`)).body.status).toBe('pending');

      const ok = await device.post(`/actions/${id}/approve`, await phone.sign(id, 'approve', null));
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ status: 'approved', resolved_by: 'biometric' });

      const other = await pendingAction(acct.api_key);
      expect((await device.post(`/actions/${other}/deny`, { reason: 'no' })).status).toBe(403);
      const denied = await device.post(`/actions/${other}/deny`, {
        reason: 'no',
        ...(await phone.sign(other, 'deny', null)),
      });
      expect(denied.status).toBe(200);
      expect(denied.body).toMatchObject({ status: 'denied', resolved_by: 'user', reason: 'no' });
    });

    it('registers keys on POST /devices and PUT /device/public-key; refuses keys that are not P-256 public keys', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const id = await pendingAction(acct.api_key);

      const rsaLike = await device.put('/device/public-key', {
        public_key:
          '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----',
      });
      expect(rsaLike.status).toBe(400);
      expect(rsaLike.body.detail).toMatch(/^public_key: /);
      const p384 = await subtle.exportKey(
        'jwk',
        (await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign'])).publicKey,
      );
      expect((await device.put('/device/public-key', { public_key: p384 })).status).toBe(400);
      expect((await api.call('POST', '/accounts', { body: { public_key: 'not a key' } })).status).toBe(400);

      const phone = await webCryptoDevice();
      const set = await device.put('/device/public-key', { public_key: phone.publicKey });
      expect(set.status).toBe(200);
      expect(set.body.has_public_key).toBe(true);
      expect((await device.post(`/actions/${id}/approve`)).status).toBe(403);

      const tablet = await webCryptoDevice();
      const added = await device.post('/devices', { device_name: 'tablet', public_key: tablet.publicKey });
      expect(added.status).toBe(200);
      expect(added.body.has_public_key).toBe(true);
      const tabletApi = api.device(added.body.device_id);
      expect((await tabletApi.post(`/actions/${id}/approve`, await phone.sign(id, 'approve', null))).status).toBe(403);
      expect((await tabletApi.post(`/actions/${id}/approve`, await tablet.sign(id, 'approve', null))).status).toBe(200);
    });

    itBesideTheService(
      'free plan: 25 actions a month counted whatever their outcome, then 402; concurrency cannot pass it; upgrading lifts it',
      async () => {
        const acct = await api.newAccount();
        const agent = api.agent(acct.api_key);
        const device = api.device(acct.device_id);
        expect((await device.get('/account')).body).toEqual({
          account_id: acct.account_id,
          member_id: expect.stringMatching(/^mem_/),
          role: 'owner',
          plan: 'free',
          actions_this_month: 0,
          monthly_quota: 25,
        });

        expect((await agent.post('/actions', { title: 'no type' })).status).toBe(400); // not validated: not counted
        const first = await pendingAction(acct.api_key);
        expect((await device.post(`/actions/${first}/deny`)).status).toBe(200); // denied still counts
        for (let i = 0; i < 14; i++) await pendingAction(acct.api_key);
        expect((await device.get('/account')).body.actions_this_month).toBe(15);

        const burst = await Promise.all(Array.from({ length: 20 }, () => agent.post('/actions', purchase)));
        expect(burst.filter((r) => r.status === 200)).toHaveLength(10);
        const refused = burst.filter((r) => r.status === 402);
        expect(refused).toHaveLength(10);
        expect(refused[0]!.body.detail).toMatch(/quota of 25 actions on the free plan.*unlimited/);
        expect((await device.get('/account')).body).toMatchObject({ actions_this_month: 25, monthly_quota: 25 });
        expect((await agent.post('/actions', purchase)).status).toBe(402);
        const client = new AgentAuthClient({ apiKey: acct.api_key, baseUrl: stack.baseUrl });
        await expect(
          client.requestAction({ action_type: 'purchase', title: 'over quota', amount: 1 }),
        ).rejects.toBeInstanceOf(QuotaExceededError);

        const upgraded = await device.post('/account/plan', { plan: 'unlimited' });
        expect(upgraded.status).toBe(200);
        expect(upgraded.body).toEqual({
          account_id: acct.account_id,
          member_id: expect.stringMatching(/^mem_/),
          role: 'owner',
          plan: 'unlimited',
          actions_this_month: 25,
          monthly_quota: null,
        });
        expect((await agent.post('/actions', purchase)).status).toBe(200);
        expect((await device.get('/account')).body.actions_this_month).toBe(26);
        // Unlimited creations are counted on rows spread over shards, not on the free plan's one counter row.
        expect(
          (await Promise.all(Array.from({ length: 10 }, () => agent.post('/actions', purchase)))).map((r) => r.status),
        ).toEqual(Array(10).fill(200));
        expect((await device.get('/account')).body.actions_this_month).toBe(36);
        const [counter] =
          await db.sql`select actions from actions.monthly_usage where account_id = ${acct.account_id} and shard = 0`;
        expect(counter!.actions).toBeLessThan(36);

        expect((await device.post('/account/plan', { plan: 'gold' })).status).toBe(400);
        const downgraded = (await device.post('/account/plan', { plan: 'free' })).body;
        expect(downgraded).toMatchObject({ monthly_quota: 25, actions_this_month: 36 }); // the month's count carries over
        expect((await agent.post('/actions', purchase)).status).toBe(402);
      },
    );
  });
}
