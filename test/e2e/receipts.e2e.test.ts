import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { webcrypto } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { canonicalSha256, requestHashOf, verifyAuditChain, verifyReceipt, VerificationError } from '@agent-auth/client';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, trustFile, type SeenRequest, type Upstream } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
const VERIFY_BIN = resolve(import.meta.dirname, '../../libs/client/bin/agent-auth-verify.mjs');
const purchase = {
  action_type: 'purchase',
  title: 'Buy a book',
  amount: 12.5,
  recipient: 'bookshop',
  metadata: { order: 'A-1' },
};

/** A device key as a browser makes it (WebCrypto P-256), signing the approval message. */
async function webCryptoDevice() {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const jwk = await webcrypto.subtle.exportKey('jwk', keys.publicKey);
  return {
    publicKey: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    async sign(id: string, decision: 'approve' | 'deny') {
      const timestamp = new Date().toISOString();
      const message = ['aa-approval-v1', id, decision, '', timestamp].join('\n');
      const sig = await webcrypto.subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        keys.privateKey,
        new TextEncoder().encode(message),
      );
      return { signature: Buffer.from(sig).toString('base64url'), timestamp };
    },
  };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`receipts and the audit chain (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let receiver: Upstream;
    const issuer = 'https://auth.example.test/api/v1';

    beforeAll(async () => {
      db = await createTestDatabase();
      const cert = selfSignedCert();
      receiver = await startUpstream({ tls: cert, handler: (_req, res) => void res.writeHead(204).end() });
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'receipts',
        env: { NODE_EXTRA_CA_CERTS: trustFile(cert), SWEEP_INTERVAL_MS: '200', RECEIPT_ISSUER: issuer },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await receiver?.close();
      await db?.drop();
    });

    const jwks = async (): Promise<JSONWebKeySet> => {
      const res = await fetch(new URL('/.well-known/jwks.json', stack.baseUrl));
      expect(res.status).toBe(200);
      return (await res.json()) as JSONWebKeySet;
    };
    /** Verifies with jose itself, as any relying party would, and returns the claims. */
    const verified = async (receipt: string) => {
      expect(decodeProtectedHeader(receipt)).toMatchObject({
        alg: 'ES256',
        typ: 'aa-receipt+jwt',
        kid: expect.any(String),
      });
      const { payload } = await jwtVerify(receipt, createLocalJWKSet(await jwks()), {
        algorithms: ['ES256'],
        typ: 'aa-receipt+jwt',
        issuer,
      });
      return payload as Record<string, unknown>;
    };
    const policyVersionOf = async (deviceId: string) => {
      const device = api.device(deviceId);
      return canonicalSha256({
        rules: (await device.get('/rules')).body.rules,
        spending_limits: (await device.get('/spending-limits')).body.spending_limits,
      });
    };

    it('serves every receipt key at /.well-known/jwks.json without authentication or rate limit', async () => {
      const set = await jwks();
      expect(set.keys).toEqual([
        expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) }),
      ]);
      expect(set.keys[0]).not.toHaveProperty('d');
      const res = await fetch(new URL('/.well-known/jwks.json', stack.baseUrl));
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    });

    it('a person approving and denying: receipts on the answer, the action and the webhook, naming the device', async () => {
      const acct = await api.newAccount();
      const agent = api.agent(acct.api_key);
      const device = api.device(acct.device_id);
      await device.post('/rules', { name: 'no socials', decision: 'auto_deny', action_type: 'social' });
      const created = await agent.post('/actions', { ...purchase, callback_url: `${receiver.origin}/hook` });
      expect(created.body).toMatchObject({ status: 'pending', receipt: null });

      const approved = await device.post(`/actions/${created.body.id}/approve`);
      expect(approved.status).toBe(200);
      const claims = await verified(approved.body.receipt);
      expect(claims).toEqual({
        iss: issuer,
        sub: created.body.id,
        iat: expect.any(Number),
        account_id: acct.account_id,
        agent_id: acct.agent_id,
        status: 'approved',
        resolved_by: 'biometric',
        resolved_at: approved.body.resolved_at,
        created_at: created.body.created_at,
        action_type: 'purchase',
        amount_cents: 1250,
        currency: 'USD',
        content_hash: null,
        request_hash: requestHashOf(created.body),
        policy_version: await policyVersionOf(acct.device_id),
        device_id: expect.stringMatching(/.+/),
        member_id: (await device.get('/account')).body.member_id,
        device_signature: null,
      });
      expect(claims.device_id).not.toBe(acct.device_id); // the device id is a credential: its public reference is named
      expect(claims.member_id).toMatch(/^mem_/); // and the person whose device it is
      expect((await agent.get(`/actions/${created.body.id}`)).body.receipt).toBe(approved.body.receipt);
      await expect.poll(() => receiver.seen.length, { timeout: 10_000 }).toBeGreaterThan(0);
      const hook = JSON.parse((receiver.seen as SeenRequest[])[0]!.body) as { receipt: string };
      expect(hook.receipt).toBe(approved.body.receipt);

      // A signed deny: the receipt carries the signature the device sent.
      const phone = await webCryptoDevice();
      expect((await device.put('/device/public-key', { public_key: phone.publicKey })).status).toBe(200);
      const other = (await agent.post('/actions', purchase)).body.id;
      const signature = await phone.sign(other, 'deny');
      const denied = await device.post(`/actions/${other}/deny`, { reason: 'not now', ...signature });
      expect(denied.status).toBe(200);
      expect(await verified(denied.body.receipt)).toMatchObject({
        sub: other,
        status: 'denied',
        resolved_by: 'user',
        device_id: claims.device_id,
        device_signature: signature.signature,
      });
    });

    it('rules and spending limits deciding at creation sign receipts under the policy version in force', async () => {
      const acct = await api.newAccount();
      const agent = api.agent(acct.api_key);
      const device = api.device(acct.device_id);
      await device.post('/spending-limits', { amount_limit: 100, period: 'daily' });
      await device.post('/rules', {
        name: 'small buys',
        decision: 'auto_approve',
        action_type: 'purchase',
        amount_max_cents: 5000,
      });
      await device.post('/rules', { name: 'no socials', decision: 'auto_deny', action_type: 'social' });
      const version = await policyVersionOf(acct.device_id);

      const byRule = (await agent.post('/actions', purchase)).body;
      expect(await verified(byRule.receipt)).toMatchObject({
        status: 'approved',
        resolved_by: 'rule:small buys',
        policy_version: version,
        request_hash: requestHashOf(byRule),
        resolved_at: byRule.created_at,
      });
      const denied = (await agent.post('/actions', { action_type: 'social', title: 'Post' })).body;
      expect(await verified(denied.receipt)).toMatchObject({
        status: 'denied',
        resolved_by: 'rule:no socials',
        amount_cents: null,
        policy_version: version,
      });
      expect(await verified(denied.receipt)).not.toHaveProperty('device_id');
      const overLimit = (await agent.post('/actions', { ...purchase, amount: 150 })).body;
      expect(overLimit.resolved_by).toMatch(/^spending_limit:lim_/);
      expect(await verified(overLimit.receipt)).toMatchObject({
        status: 'denied',
        resolved_by: overLimit.resolved_by,
        amount_cents: 15000,
        policy_version: version,
      });
      const leftToPerson = (await agent.post('/actions', { action_type: 'communication', title: 'Send' })).body;
      expect(leftToPerson.status).toBe('pending');
      // The version moves with the policy; a request left to a person keeps the version that left it to them.
      await device.post('/rules', { name: 'later', decision: 'auto_approve', action_type: 'legal' });
      const after = (await agent.post('/actions', purchase)).body;
      expect((await verified(after.receipt)).policy_version).not.toBe(version);
      expect((await verified(after.receipt)).policy_version).toBe(await policyVersionOf(acct.device_id));
      const approved = (await device.post(`/actions/${leftToPerson.id}/approve`)).body;
      expect(await verified(approved.receipt)).toMatchObject({ status: 'approved', policy_version: version });
    });

    itBesideTheService('expiry, lazy on read and by the sweeper, signs a receipt with resolved_by system', async () => {
      const acct = await api.newAccount();
      const agent = api.agent(acct.api_key);
      const lazy = (await agent.post('/actions', { ...purchase, expires_in_seconds: 30 })).body.id;
      const swept = (await agent.post('/actions', { ...purchase, expires_in_seconds: 30 })).body.id;
      await db.sql`update actions.requests set expires_at = now() - interval '1 second' where id in (${lazy}, ${swept})`;
      const read = (await agent.get(`/actions/${lazy}`)).body;
      expect(await verified(read.receipt)).toMatchObject({
        sub: lazy,
        status: 'expired',
        resolved_by: 'system',
        resolved_at: read.resolved_at,
      });
      await expect
        .poll(async () => (await db.sql`select receipt from actions.requests where id = ${swept}`)[0]?.receipt, {
          timeout: 10_000,
        })
        .toBeTruthy();
      const sweptView = (await agent.get(`/actions/${swept}`)).body;
      expect(await verified(sweptView.receipt)).toMatchObject({
        sub: swept,
        status: 'expired',
        resolved_by: 'system',
        policy_version: await policyVersionOf(acct.device_id),
      });
      const trail = (await api.device(acct.device_id).get(`/actions/${swept}/audit`)).body.events;
      expect(trail.map((e: { type: string }) => e.type)).toEqual(['created', 'expired']);
      expect(trail[1].data).toEqual({ receipt: sweptView.receipt });
    });

    it("chains every account event, serves pages, a signed head and one request's trail, all verifying", async () => {
      const acct = await api.newAccount();
      const agent = api.agent(acct.api_key);
      const device = api.device(acct.device_id);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await agent.post('/actions', { ...purchase, metadata: { secret_note: `never-in-audit-${i}` } })).body.id,
        );
      const approvedReceipt = (await device.post(`/actions/${ids[0]}/approve`)).body.receipt;
      await device.post(`/actions/${ids[1]}/deny`, { reason: 'no' });

      const first = await device.get('/audit?limit=3');
      expect(first.status).toBe(200);
      expect(first.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3]);
      expect(first.body.next_after).toBe(3);
      expect(first.body.events[0]).toMatchObject({
        seq: 1,
        request_id: null,
        type: 'account_created',
        prev_hash: '0'.repeat(64),
      });
      expect(first.body.events[1]).toEqual({
        seq: 2,
        at: expect.any(String),
        request_id: ids[0],
        type: 'created',
        actor: `agent:${acct.agent_id}`,
        data: expect.objectContaining({ request_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }),
        prev_hash: first.body.events[0].hash,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const rest = await device.get('/audit?after=3&limit=500');
      expect(rest.body.next_after).toBeNull();
      const events = [...first.body.events, ...rest.body.events];
      expect(events.map((e) => e.type)).toEqual([
        'account_created',
        'created',
        'created',
        'created',
        'created',
        'created',
        'approved',
        'denied',
      ]);
      expect(JSON.stringify(events)).not.toContain('never-in-audit');
      // Each resolution's receipt is in the chain with it.
      expect(events[6].data).toMatchObject({ method: 'biometric', receipt: approvedReceipt });
      expect((await verified(events[7].data.receipt)).status).toBe('denied');
      const head = (await device.get('/audit/head')).body;
      expect(head).toMatchObject({ seq: 8, hash: events[7].hash, at: events[7].at, signature: expect.any(String) });
      expect(await verifyAuditChain(events, head, await jwks())).toMatchObject({
        account_id: acct.account_id,
        head_seq: 8,
        events: 8,
      });

      const trail = await device.get(`/actions/${ids[0]}/audit`);
      expect(trail.body.events.map((e: { type: string; seq: number }) => `${e.seq}:${e.type}`)).toEqual([
        '2:created',
        '7:approved',
      ]);
      expect((await device.get(`/actions/${ids[0]}/audit`.replace(ids[0]!, 'act_nope'))).status).toBe(404);
      const stranger = await api.newAccount();
      expect((await api.device(stranger.device_id).get(`/actions/${ids[0]}/audit`)).status).toBe(404);
      const theirs = (await api.device(stranger.device_id).get('/audit')).body;
      expect(theirs.events.map((e: { type: string }) => e.type)).toEqual(['account_created']);
      expect((await device.get('/audit?limit=0')).status).toBe(400);
      expect((await device.get('/audit?limit=501')).body.detail).toMatch(/^limit: /);
      expect((await device.get('/audit?after=x')).body.detail).toMatch(/^after: /);
      expect((await agent.get('/audit')).status).toBe(401);
    });

    itBesideTheService(
      "a row changed behind the service's back is found at exactly that event, by the library and the command line",
      async () => {
        const acct = await api.newAccount();
        const agent = api.agent(acct.api_key);
        const device = api.device(acct.device_id);
        for (let i = 0; i < 4; i++) await agent.post('/actions', purchase);
        const exported = {
          events: (await device.get('/audit')).body.events,
          head: (await device.get('/audit/head')).body,
        };
        const keys = await jwks();
        const dir = mkdtempSync(join(tmpdir(), 'aa-verify-'));
        writeFileSync(join(dir, 'jwks.json'), JSON.stringify(keys));
        writeFileSync(join(dir, 'export.json'), JSON.stringify(exported));
        const cli = (...args: string[]) =>
          promisify(execFile)(process.execPath, [VERIFY_BIN, ...args]).then(
            (r) => ({ code: 0, out: r.stdout }),
            (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
          );
        expect(await cli('--audit', join(dir, 'export.json'), '--jwks', join(dir, 'jwks.json'))).toMatchObject({
          code: 0,
          out: expect.stringMatching(/audit chain verified: .*5 events/),
        });

        // A superuser edits event 3 with the append-only trigger switched off.
        const { id } = (
          await db.sql`select event_id as id from actions.audit_chain where account_id = ${acct.account_id} and seq = 3`
        )[0]!;
        await db.sql.begin(async (tx) => {
          await tx`alter table actions.audit_events disable trigger audit_append_only`;
          await tx`update actions.audit_events set detail = detail || '{"amount_cents": 1}'::jsonb where id = ${id}`;
          await tx`alter table actions.audit_events enable trigger audit_append_only`;
        });
        const tampered = {
          events: (await device.get('/audit')).body.events,
          head: (await device.get('/audit/head')).body,
        };
        const failure = await verifyAuditChain(tampered.events, tampered.head, keys).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(VerificationError);
        expect(failure).toMatchObject({ seq: 3 });
        writeFileSync(join(dir, 'tampered.json'), JSON.stringify(tampered));
        expect(await cli('--audit', join(dir, 'tampered.json'), '--jwks', join(dir, 'jwks.json'))).toMatchObject({
          code: 1,
          out: expect.stringMatching(/NOT VERIFIED: event 3: .*first broken event: 3/),
        });
        // Without the trigger off, the table refuses any change.
        await expect(db.sql`update actions.audit_events set actor = 'x' where id = ${id}`).rejects.toThrow(
          /append-only/,
        );
        await expect(db.sql`delete from actions.audit_events where id = ${id}`).rejects.toThrow(/append-only/);
        // Nor may an event's place in its chain change.
        await expect(db.sql`update actions.audit_chain set hash = 'x' where event_id = ${id}`).rejects.toThrow(
          /append-only/,
        );
        await expect(db.sql`delete from actions.audit_chain where event_id = ${id}`).rejects.toThrow(/append-only/);

        // A receipt checked offline from the saved JWKS; a forged one is refused.
        const receipt = (await api.device(acct.device_id).post(`/actions/${exported.events[1].request_id}/approve`))
          .body.receipt as string;
        writeFileSync(join(dir, 'receipt.jws'), receipt);
        expect(await cli(join(dir, 'receipt.jws'), '--jwks', join(dir, 'jwks.json'))).toMatchObject({
          code: 0,
          out: expect.stringContaining('receipt verified'),
        });
        const [h, p, s] = receipt.split('.');
        const forged = [
          h,
          Buffer.from(
            JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), amount_cents: 1 }),
          ).toString('base64url'),
          s,
        ].join('.');
        await expect(verifyReceipt(forged, keys)).rejects.toBeInstanceOf(VerificationError);
        writeFileSync(join(dir, 'forged.jws'), forged);
        expect(await cli(join(dir, 'forged.jws'), '--jwks', join(dir, 'jwks.json'))).toMatchObject({ code: 1 });
      },
    );

    itBesideTheService(
      'seals events written concurrently by many creations, each account its own gapless chain',
      async () => {
        const accounts = await Promise.all([api.newAccount(), api.newAccount()]);
        const created = await Promise.all(
          accounts.flatMap((a) => Array.from({ length: 40 }, () => api.agent(a.api_key).post('/actions', purchase))),
        );
        expect(created.map((r) => r.status)).toEqual(created.map(() => 200));
        // Without asking the service (which seals on read), the background sealer reaches every event.
        await expect
          .poll(async () => Number((await db.sql`select count(*) from actions.audit_unsealed`)[0]!.count), {
            timeout: 10_000,
          })
          .toBe(0);
        for (const a of accounts) {
          const device = api.device(a.device_id);
          const events = (await device.get('/audit?limit=500')).body.events;
          expect(events.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1)); // and account_created
          await verifyAuditChain(events, (await device.get('/audit/head')).body, await jwks());
        }
      },
    );
  });
}
