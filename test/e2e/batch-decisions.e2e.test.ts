import { createHash, webcrypto } from 'node:crypto';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { softwarePasskey } from '../harness/software-passkey.js';
import { itBesideTheService } from '../harness/sessions.js';

// Batch approve and deny: one proof for the whole batch (TOTP code, ECDSA signature or passkey
// assertion over the batch message), then each request resolved on its own with its own result.

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];
const subtle = webcrypto.subtle;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

type Item = { id: string; content_hash?: string | null };

/** The batch message, written out here independently of the service's own code. */
function batchMessage(decision: 'approve' | 'deny', requests: Item[], timestamp: string): string {
  return ['aa-approval-batch-v1', decision, ...requests.map((r) => `${r.id} ${r.content_hash ?? ''}`), timestamp].join(
    '\n',
  );
}

/** A device key as a browser makes it (WebCrypto P-256), signing batch messages. */
async function webCryptoDevice() {
  const keys = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const jwk = await subtle.exportKey('jwk', keys.publicKey);
  return {
    publicKey: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    async sign(message: string) {
      const sig = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, Buffer.from(message));
      return Buffer.from(sig).toString('base64url');
    },
  };
}

const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`batch approve and deny (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'batch-decisions' });
      // Passkeys are bound to a domain name: the service is reached as localhost, as a browser would.
      const base = new URL(stack.baseUrl);
      base.hostname = 'localhost';
      origin = base.origin;
      api = apiClient(base.href.replace(/\/$/, ''));
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    async function account() {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const agent = api.agent(acct.api_key);
      const create = async (body: Record<string, unknown>) => {
        const r = await agent.post('/actions', body);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body as { id: string; content_hash: string | null; status: string };
      };
      return { acct, device, agent, create };
    }

    itBesideTheService(
      'approves several requests with per-request results: one already settled is 409 (with its code), an unknown or foreign id 404, the others approved',
      async () => {
        const { device, agent, create } = await account();
        const a = await create({ action_type: 'purchase', title: 'Paper', amount: 3 });
        const b = await create({ action_type: 'communication', title: 'Email Bob' });
        const settled = await create({ action_type: 'social', title: 'Post' });
        expect((await device.post(`/actions/${settled.id}/deny`, {})).status).toBe(200);
        const foreign = await (await account()).create({ action_type: 'social', title: 'Not yours' });

        const r = await device.post('/actions/approve', {
          requests: [{ id: a.id }, { id: settled.id }, { id: 'act_doesnotexist' }, { id: foreign.id }, { id: b.id }],
        });
        expect(r.status).toBe(200);
        expect(r.body.results).toEqual([
          { id: a.id, status: 200, action: expect.objectContaining({ id: a.id, status: 'approved' }) },
          {
            id: settled.id,
            status: 409,
            code: 'action_not_pending',
            detail: "Action request is 'denied', not pending",
          },
          { id: 'act_doesnotexist', status: 404, code: 'action_not_found', detail: expect.stringMatching(/not found/) },
          { id: foreign.id, status: 404, code: 'action_not_found', detail: expect.stringMatching(/not found/) },
          { id: b.id, status: 200, action: expect.objectContaining({ id: b.id, status: 'approved' }) },
        ]);
        expect(r.body.results[0].action).toMatchObject({ resolved_by: 'biometric', receipt: expect.any(String) });
        for (const id of [a.id, b.id]) expect((await agent.get(`/actions/${id}`)).body.status).toBe('approved');
        // The other account's request is untouched.
        const [foreignRow] = await db.sql`select status from actions.requests where id = ${foreign.id}`;
        expect(foreignRow!.status).toBe('pending');

        // The same batch again: each request reports that it is no longer pending.
        const again = await device.post('/actions/approve', { requests: [{ id: a.id }, { id: b.id }] });
        expect(again.body.results.map((x: { status: number; code: string }) => [x.status, x.code])).toEqual([
          [409, 'action_not_pending'],
          [409, 'action_not_pending'],
        ]);
      },
    );

    it('denies a batch with one reason; a vault request needs its content hash, checked per request', async () => {
      const { device, agent, create } = await account();
      const plain = await create({ action_type: 'legal', title: 'Sign' });
      const vault = await create({
        action_type: 'system',
        title: 'call the API',
        metadata: { vault_execute: true, service_name: 'svc', method: 'GET', url: 'https://api.example.com/x' },
      });
      expect(vault.content_hash).toMatch(/^[0-9a-f]{64}$/);
      const approveWrong = await device.post('/actions/approve', {
        requests: [{ id: vault.id }, { id: vault.id, content_hash: '0'.repeat(64) }],
      });
      expect(approveWrong.body.results).toEqual([
        { id: vault.id, status: 403, code: 'content_hash_required', detail: expect.any(String) },
        { id: vault.id, status: 403, code: 'content_hash_mismatch', detail: expect.any(String) },
      ]);
      const denied = await device.post('/actions/deny', {
        requests: [{ id: plain.id }, { id: vault.id, content_hash: vault.content_hash }],
        reason: 'not today',
      });
      expect(denied.status).toBe(200);
      expect(denied.body.results.map((x: { status: number }) => x.status)).toEqual([200, 200]);
      for (const id of [plain.id, vault.id])
        expect((await agent.get(`/actions/${id}`)).body).toMatchObject({
          status: 'denied',
          resolved_by: 'user',
          reason: 'not today',
        });
    });

    it('validates the body: 1 to 50 requests, each with an id; 400 naming the field', async () => {
      const { device } = await account();
      for (const [body, field] of [
        [{}, /requests/],
        [{ requests: [] }, /requests/],
        [{ requests: Array.from({ length: 51 }, (_, i) => ({ id: `act_${i}` })) }, /requests/],
        [{ requests: [{}] }, /requests\[0\]\.id/],
        [{ requests: [{ id: 'x' }], totp_code: 'abc' }, /totp_code/],
      ] as const) {
        const r = await device.post('/actions/approve', body);
        expect([r.status, r.body.code, r.body.detail]).toEqual([400, 'invalid_request', expect.stringMatching(field)]);
      }
      expect((await device.post('/actions/deny', { requests: 'all' })).status).toBe(400);
      // No device id: 401 like every device route.
      expect((await api.call('POST', '/actions/approve', { body: { requests: [{ id: 'x' }] } })).status).toBe(401);
      // 50 is allowed (all unknown here: each its own 404).
      const fifty = await device.post('/actions/approve', {
        requests: Array.from({ length: 50 }, (_, i) => ({ id: `act_none${i}` })),
      });
      expect(fifty.status).toBe(200);
      expect(fifty.body.results).toHaveLength(50);
      expect(new Set(fifty.body.results.map((x: { status: number }) => x.status))).toEqual(new Set([404]));
    });

    it('a TOTP code is checked once for the whole batch (resolved_by totp); a wrong or reused code refuses all of it', async () => {
      const { device, agent, create } = await account();
      const { secret } = (await device.post('/totp/enroll')).body;
      const [a, b] = [
        await create({ action_type: 'purchase', title: 'A', amount: 1 }),
        await create({ action_type: 'purchase', title: 'B', amount: 2 }),
      ];
      const code = await generate({ secret });
      const wrong = await device.post('/actions/approve', {
        requests: [{ id: a.id }, { id: b.id }],
        totp_code: code === '000000' ? '000001' : '000000',
      });
      expect([wrong.status, wrong.body.code]).toEqual([403, 'totp_invalid']);
      for (const id of [a.id, b.id]) expect((await agent.get(`/actions/${id}`)).body.status).toBe('pending');

      const ok = await device.post('/actions/approve', { requests: [{ id: a.id }, { id: b.id }], totp_code: code });
      expect(ok.status).toBe(200);
      expect(ok.body.results.map((x: { action: { resolved_by: string } }) => x.action.resolved_by)).toEqual([
        'totp',
        'totp',
      ]);
      const c = await create({ action_type: 'purchase', title: 'C', amount: 3 });
      const reused = await device.post('/actions/approve', { requests: [{ id: c.id }], totp_code: code });
      expect([reused.status, reused.body.detail]).toEqual([403, expect.stringMatching(/already used/)]);
      expect((await agent.get(`/actions/${c.id}`)).body.status).toBe('pending');
    });

    itBesideTheService(
      'a device with a public key signs the batch message (aa-approval-batch-v1); unsigned, reordered or tampered batches are 403',
      async () => {
        const { acct, device, agent, create } = await account();
        const key = await webCryptoDevice();
        expect((await device.put('/device/public-key', { public_key: key.publicKey })).status).toBe(200);
        const a = await create({ action_type: 'purchase', title: 'A', amount: 4 });
        const vault = await create({
          action_type: 'system',
          title: 'call',
          metadata: { vault_execute: true, service_name: 'svc', method: 'POST', url: 'https://api.example.com/y' },
        });
        const items: Item[] = [{ id: vault.id, content_hash: vault.content_hash }, { id: a.id }];
        const timestamp = now();
        const signature = await key.sign(batchMessage('approve', items, timestamp));

        const unsigned = await device.post('/actions/approve', { requests: items });
        expect([unsigned.status, unsigned.body.code]).toEqual([403, 'device_signature_invalid']);
        for (const body of [
          { requests: [...items].reverse(), signature, timestamp },
          { requests: items, signature: await key.sign(batchMessage('deny', items, timestamp)), timestamp },
          { requests: [items[0]], signature, timestamp },
          { requests: items, signature, timestamp: now().replace(/Z$/, '+00:00') },
        ]) {
          const r = await device.post('/actions/approve', body);
          expect([r.status, r.body.code, r.body.detail]).toEqual([
            403,
            'device_signature_invalid',
            expect.stringMatching(/aa-approval-batch-v1/),
          ]);
        }
        for (const id of [a.id, vault.id]) expect((await agent.get(`/actions/${id}`)).body.status).toBe('pending');

        const ok = await device.post('/actions/approve', { requests: items, signature, timestamp });
        expect(ok.status).toBe(200);
        expect(ok.body.results.map((x: { status: number }) => x.status)).toEqual([200, 200]);
        // The receipt of each carries the batch signature; the audit entry keeps what was signed, to check it again.
        expect(claimsOf(ok.body.results[1].action.receipt)).toMatchObject({ device_signature: signature });
        const [event] =
          await db.sql`select detail from actions.audit_events where request_id = ${a.id} and event = 'approved'`;
        expect(event!.detail).toMatchObject({
          signed: true,
          signed_timestamp: timestamp,
          batch_size: 2,
          signed_batch: [
            { id: vault.id, content_hash: vault.content_hash },
            { id: a.id, content_hash: null },
          ],
        });
        expect(acct.account_id).toMatch(/^acc_/);

        // Deny signs "deny"; a single approval's message does not stand in for a batch.
        const b = await create({ action_type: 'social', title: 'B' });
        const t2 = now();
        const single = await key.sign(['aa-approval-v1', b.id, 'deny', '', t2].join('\n'));
        expect(
          (await device.post('/actions/deny', { requests: [{ id: b.id }], signature: single, timestamp: t2 })).status,
        ).toBe(403);
        const denied = await device.post('/actions/deny', {
          requests: [{ id: b.id }],
          signature: await key.sign(batchMessage('deny', [{ id: b.id }], t2)),
          timestamp: t2,
        });
        expect(denied.body.results).toEqual([
          { id: b.id, status: 200, action: expect.objectContaining({ status: 'denied' }) },
        ]);
      },
    );

    itBesideTheService(
      'a device with a passkey approves a batch with one assertion over the batch message: biometric, user_verified and passkey_id on each; without it 403; a replay is refused',
      async () => {
        const { device, agent, create } = await account();
        const passkey = softwarePasskey({ rpId: 'localhost', origin });
        const registered = await device.post(
          '/device/passkeys',
          passkey.register((await device.post('/device/passkeys/options')).body),
        );
        expect(registered.status).toBe(200);
        const passkeyId = registered.body.passkey_id as string;
        const [a, b] = [
          await create({ action_type: 'purchase', title: 'A', amount: 5 }),
          await create({ action_type: 'scheduling', title: 'B' }),
        ];
        const items: Item[] = [{ id: a.id }, { id: b.id }];

        const bare = await device.post('/actions/approve', { requests: items });
        expect([bare.status, bare.body.code]).toEqual([403, 'passkey_required']);
        const bareDeny = await device.post('/actions/deny', { requests: items });
        expect([bareDeny.status, bareDeny.body.code]).toEqual([403, 'passkey_required']);

        const timestamp = now();
        const challenge = (decision: 'approve' | 'deny', list: Item[], t: string) =>
          createHash('sha256')
            .update(batchMessage(decision, list, t))
            .digest('base64url');
        // An assertion over the deny message is no approval.
        const crossed = await device.post('/actions/approve', {
          requests: items,
          timestamp,
          webauthn: passkey.assert(challenge('deny', items, timestamp)),
        });
        expect([crossed.status, crossed.body.code]).toEqual([403, 'passkey_assertion_invalid']);

        const webauthn = passkey.assert(challenge('approve', items, timestamp));
        const ok = await device.post('/actions/approve', { requests: items, timestamp, webauthn });
        expect(ok.status, JSON.stringify(ok.body)).toBe(200);
        for (const result of ok.body.results)
          expect(result.action).toMatchObject({
            status: 'approved',
            resolved_by: 'biometric',
            user_verified: true,
            passkey_id: passkeyId,
          });
        expect(claimsOf(ok.body.results[0].action.receipt)).toMatchObject({
          user_verified: true,
          passkey_id: passkeyId,
        });
        const events =
          await db.sql`select detail from actions.audit_events where request_id in ${db.sql([a.id, b.id])} and event = 'approved'`;
        expect(events).toHaveLength(2);
        for (const e of events)
          expect(e.detail).toMatchObject({ method: 'biometric', user_verified: true, passkey_id: passkeyId });
        for (const id of [a.id, b.id]) expect((await agent.get(`/actions/${id}`)).body.user_verified).toBe(true);

        // The same assertion again (a replay) is refused before any request is looked at.
        const c = await create({ action_type: 'social', title: 'C' });
        const replay = await device.post('/actions/deny', { requests: [{ id: c.id }], timestamp, webauthn });
        expect(replay.status).toBe(403);
        const t2 = now();
        const denied = await device.post('/actions/deny', {
          requests: [{ id: c.id }],
          reason: 'no',
          timestamp: t2,
          webauthn: passkey.assert(challenge('deny', [{ id: c.id }], t2)),
        });
        expect(denied.body.results[0].action).toMatchObject({
          status: 'denied',
          user_verified: true,
          passkey_id: passkeyId,
        });
      },
    );

    it('approving a batch spends against the limits like single approvals, and two racing batches over the same requests approve each once', async () => {
      const { device, agent, create } = await account();
      expect((await device.post('/spending-limits', { period: 'daily', amount_limit: 100 })).status).toBe(200);
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push((await create({ action_type: 'purchase', title: `P${i}`, amount: 10 })).id);
      const requests = ids.map((id) => ({ id }));
      const [one, two] = await Promise.all([
        device.post('/actions/approve', { requests }),
        device.post('/actions/approve', { requests: [...requests].reverse() }),
      ]);
      expect([one.status, two.status]).toEqual([200, 200]);
      for (const id of ids) {
        const statuses = [one, two].map(
          (r) => r.body.results.find((x: { id: string }) => x.id === id).status as number,
        );
        expect(statuses.sort()).toEqual([200, 409]);
      }
      // Six approvals of $10, each counted once, whichever batch won it.
      expect((await agent.get('/agent/spending-summary')).body.summaries).toEqual([
        expect.objectContaining({ limit: 100, spent: 60, remaining: 40 }),
      ]);
    });
  });
}
