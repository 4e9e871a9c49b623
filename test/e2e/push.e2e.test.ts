import { createECDH, randomBytes } from 'node:crypto';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, type Upstream, trustFile } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';
import { inviteAndJoin } from '../harness/members.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

/** A browser-like push subscription whose endpoint is our loopback receiver. */
function subscription(endpoint: string) {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
  };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`Web Push to devices (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let pushService: Upstream;
    const vapid = webpush.generateVAPIDKeys();

    beforeAll(async () => {
      db = await createTestDatabase();
      const cert = selfSignedCert();
      const caFile = trustFile(cert);
      // Answers like a push service: 201 Created, or 410 Gone for a subscription that no longer exists.
      pushService = await startUpstream({
        tls: cert,
        handler: (req, res) => void res.writeHead(req.url.startsWith('/gone') ? 410 : 201).end(),
      });
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'push',
        env: {
          NODE_EXTRA_CA_CERTS: caFile,
          VAPID_PUBLIC_KEY: vapid.publicKey,
          VAPID_PRIVATE_KEY: vapid.privateKey,
          VAPID_SUBJECT: 'mailto:ops@example.com',
        },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await pushService?.close();
      await db?.drop();
    });

    it('pushes a VAPID-signed, encrypted notice to every subscription of the account for a new pending request', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      expect((await device.get('/device/push-config')).body).toEqual({
        provider: 'web_push',
        vapid_public_key: vapid.publicKey,
      });
      const sub = await device.post(
        '/device/push-subscriptions',
        subscription(`${pushService.origin}/push/${acct.account_id}`),
      );
      expect(sub.status).toBe(200);

      await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'legal', title: 'Sign the lease', risk_level: 'high' });
      const mine = () => pushService.seen.filter((r) => r.url === `/push/${acct.account_id}`);
      await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(1);
      const push = mine()[0]!;
      expect(push.method).toBe('POST');
      expect(push.headers['content-encoding']).toBe('aes128gcm');
      expect(push.headers.ttl).toBe('300');
      const auth = String(push.headers.authorization);
      expect(auth).toMatch(/^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=/);
      expect(auth.split('k=')[1]).toBe(vapid.publicKey);
      const claims = JSON.parse(Buffer.from(auth.slice('vapid t='.length).split('.')[1]!, 'base64url').toString());
      expect(claims).toMatchObject({ aud: pushService.origin, sub: 'mailto:ops@example.com' });
      expect(push.body).not.toContain('Sign the lease'); // encrypted
    });

    itBesideTheService(
      'deletes a subscription the push service reports gone, and pushes nothing once unsubscribed',
      async () => {
        const acct = await api.newAccount();
        const device = api.device(acct.device_id);
        await device.post('/device/push-subscriptions', subscription(`${pushService.origin}/gone/${acct.account_id}`));
        await api.agent(acct.api_key).post('/actions', { action_type: 'social', title: 'Post it' });
        await expect
          .poll(
            async () =>
              Number(
                (
                  await db.sql`select count(*)::int as n from notifier.push_subscriptions where account_id = ${acct.account_id}`
                )[0]!.n,
              ),
            { timeout: 10_000 },
          )
          .toBe(0);

        const kept = subscription(`${pushService.origin}/push/${acct.account_id}/kept`);
        await device.post('/device/push-subscriptions', kept);
        expect(
          (
            await api.call('DELETE', '/device/push-subscriptions', {
              body: { endpoint: kept.endpoint },
              headers: { 'x-device-id': acct.device_id },
            })
          ).body,
        ).toEqual({ deleted: true });
        await api.agent(acct.api_key).post('/actions', { action_type: 'social', title: 'Post again' });
        await new Promise((r) => setTimeout(r, 700));
        expect(pushService.seen.filter((r) => r.url.endsWith('/kept'))).toHaveLength(0);
      },
    );

    it('pushes a request a rule leaves to a role to the members holding it, and no one else', async () => {
      const acct = await api.newAccount();
      const owner = api.device(acct.device_id);
      const ada = await inviteAndJoin(api, acct.device_id, { name: 'Ada', role: 'admin' });
      const lee = await inviteAndJoin(api, acct.device_id, { name: 'Lee', role: 'approver' });
      const endpointOf = (who: string) => `${pushService.origin}/push/${acct.account_id}/${who}`;
      for (const [who, deviceId] of [
        ['owner', acct.device_id],
        ['ada', ada.device_id],
        ['lee', lee.device_id],
      ] as const)
        expect(
          (await api.device(deviceId).post('/device/push-subscriptions', subscription(endpointOf(who)))).status,
        ).toBe(200);
      const rule = await owner.post('/rules', {
        name: 'contracts to the admins',
        decision: 'ask',
        action_type: 'legal',
        approvers: ['role:admin'],
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);

      await api.agent(acct.api_key).post('/actions', { action_type: 'legal', title: 'Sign the NDA' });
      const seenBy = (who: string) => pushService.seen.filter((r) => r.url === `/push/${acct.account_id}/${who}`);
      await expect.poll(() => seenBy('ada').length, { timeout: 10_000 }).toBe(1);
      // The others' pushes would have gone out together with Ada's.
      await new Promise((r) => setTimeout(r, 500));
      expect([seenBy('owner').length, seenBy('lee').length]).toEqual([0, 0]);
    });
  });
}
