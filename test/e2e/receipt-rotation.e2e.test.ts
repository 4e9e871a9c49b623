// Receipt key rotation across a restart (docs/security.md, Rotating the receipt key): receipts and chain heads signed before
// the rotation still verify against the key set served after restarting with the new key first and the old one
// kept as retired (its public half only); what is signed afterwards names the new key.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyAuditChain, verifyReceipt, VerificationError } from '@agent-auth/client';
import { generateKeyringSpec } from '@agent-auth/encryption';
import { createTestDatabase } from '../infra/database.js';
import { apiClient } from '../harness/http.js';
import { receiptKeySpec, startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
const issuer = 'https://auth.example.test/api/v1';
const small = { action_type: 'purchase', title: 'Small purchase', amount: 5, recipient: 'shop' };
const large = { action_type: 'purchase', title: 'Large purchase', amount: 50, recipient: 'shop' };

/** The retired form of a RECEIPT_KEYS entry, as an operator makes it: the public half (SPKI DER) of the key. */
function retired(entry: string): string {
  const [kid, der] = entry.split(':') as [string, string];
  const key = createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' });
  return `${kid}:${createPublicKey(key).export({ format: 'der', type: 'spki' }).toString('base64')}`;
}

async function jwksOf(stack: Stack): Promise<JSONWebKeySet> {
  const res = await fetch(new URL('/.well-known/jwks.json', stack.baseUrl));
  expect(res.status).toBe(200);
  return (await res.json()) as JSONWebKeySet;
}

/** Verifies with jose itself, as any relying party would. */
const joseVerify = (receipt: string, jwks: JSONWebKeySet) =>
  jwtVerify(receipt, createLocalJWKSet(jwks), { algorithms: ['ES256'], typ: 'aa-receipt+jwt', issuer });

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`receipt key rotation across a restart (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let stack: Stack | undefined;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('receipts and a chain head signed before still verify after restarting with the new key first and the old one retired', async () => {
      // The same data keys on both sides of the restart: only the receipt keys change.
      const kept = {
        ACTIONS_KEYS: generateKeyringSpec('k1'),
        VAULT_KEYS: generateKeyringSpec('v1'),
        RECEIPT_ISSUER: issuer,
      };
      const r1 = receiptKeySpec('r1');
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'rotation',
        env: { ...kept, RECEIPT_KEYS: r1 },
      });
      let api = apiClient(stack.baseUrl);
      const acct = await api.newAccount();
      const rule = await api.device(acct.device_id).post('/rules', {
        name: 'small purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        amount_max_cents: 1000,
      });
      expect(rule.status).toBe(200);
      const byRule = (await api.agent(acct.api_key).post('/actions', small)).body;
      expect(byRule.status).toBe('approved');
      const pending = (await api.agent(acct.api_key).post('/actions', large)).body;
      expect(pending.status).toBe('pending');
      const byPerson = await api.device(acct.device_id).post(`/actions/${pending.id}/approve`);
      expect(byPerson.status).toBe(200);
      const signedBefore = [byRule.receipt as string, byPerson.body.receipt as string];
      const before = {
        jwks: await jwksOf(stack),
        events: (await api.device(acct.device_id).get('/audit?limit=500')).body.events,
        head: (await api.device(acct.device_id).get('/audit/head')).body,
      };
      expect(before.jwks.keys.map((k) => k.kid)).toEqual(['r1']);
      for (const receipt of signedBefore) expect(decodeProtectedHeader(receipt).kid).toBe('r1');
      expect(decodeProtectedHeader(before.head.signature).kid).toBe('r1');
      await stack.stop();
      stack = undefined;

      // Rotated: r2 signs, r1 stays listed by its public half only (its private key may be destroyed).
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'rotation',
        env: { ...kept, RECEIPT_KEYS: `${receiptKeySpec('r2')},${retired(r1)}` },
      });
      api = apiClient(stack.baseUrl);
      const after = await jwksOf(stack);
      expect(after.keys.map((k) => k.kid)).toEqual(['r2', 'r1']);
      expect(after.keys[1]).toEqual(before.jwks.keys[0]);

      // Receipts saved before the rotation, and as the service still serves them, verify against the new set.
      for (const receipt of signedBefore) {
        expect((await joseVerify(receipt, after)).payload.iss).toBe(issuer);
        expect((await verifyReceipt(receipt, after)).status).toBe('approved');
      }
      expect((await api.agent(acct.api_key).get(`/actions/${byRule.id}`)).body.receipt).toBe(byRule.receipt);
      expect((await api.agent(acct.api_key).get(`/actions/${pending.id}`)).body.receipt).toBe(signedBefore[1]);
      // So does the chain exported before, with its head signed by r1.
      await verifyAuditChain(before.events, before.head, after);

      // What is signed from now on names r2; the whole chain, across the restart, verifies under the new head.
      const later = (await api.agent(acct.api_key).post('/actions', small)).body;
      expect(later.status).toBe('approved');
      expect(decodeProtectedHeader(later.receipt).kid).toBe('r2');
      expect((await joseVerify(later.receipt, after)).payload.sub).toBe(later.id);
      const events = (await api.device(acct.device_id).get('/audit?limit=500')).body.events;
      const head = (await api.device(acct.device_id).get('/audit/head')).body;
      expect(decodeProtectedHeader(head.signature).kid).toBe('r2');
      expect(events.slice(0, before.events.length)).toEqual(before.events);
      expect(await verifyAuditChain(events, head, after)).toMatchObject({ head_seq: events.length });

      // Dropping the retired key from the set is what would break them: the check can fail.
      const withoutR1 = { keys: after.keys.filter((k) => k.kid !== 'r1') };
      await expect(verifyReceipt(signedBefore[0]!, withoutR1)).rejects.toBeInstanceOf(VerificationError);
    }, 180_000);
  });
}
