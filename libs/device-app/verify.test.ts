import { generateKeyPairSync } from 'node:crypto';
import { CompactSign, exportJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { auditEventHash as serviceHash, canonicalSha256 } from '@agent-auth/contracts';
// The browser module itself, run on Node's WebCrypto: the same code the device app runs.
import { auditEventHash, canonicalJson, sha256Hex, verifyChain, verifyReceipt } from './public/verify.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'r1', alg: 'ES256', use: 'sig' }] };

async function chain(n: number) {
  const events = [];
  let prev = '0'.repeat(64);
  for (let seq = 1; seq <= n; seq++) {
    const event = {
      seq,
      at: `2026-01-01T00:00:0${seq}.000Z`,
      request_id: seq === 1 ? null : `act_${seq}`,
      type: 'created',
      actor: 'agent:agt_1',
      data: { n: seq, é: 'ü', list: [1.5, null] },
      prev_hash: prev,
    };
    prev = serviceHash(event);
    events.push({ ...event, hash: prev });
  }
  const last = events[n - 1]!;
  const body = JSON.stringify({ account_id: 'acc_1', seq: last.seq, hash: last.hash, at: last.at });
  const signature = await new CompactSign(new TextEncoder().encode(body))
    .setProtectedHeader({ alg: 'ES256', typ: 'aa-audit-head+jws', kid: 'r1' })
    .sign(privateKey);
  return { events, head: { seq: last.seq, hash: last.hash, at: last.at, signature } };
}

describe('device app verification (browser module on WebCrypto)', () => {
  it('canonicalizes and hashes exactly as the service does', async () => {
    const value = { b: [3, { z: 1, a: 'x"y' }], a: 0.1, c: null, ü: true };
    expect(await sha256Hex(canonicalJson(value))).toBe(canonicalSha256(value));
    const { events } = await chain(2);
    expect(await auditEventHash(events[1])).toBe(events[1]!.hash);
  });

  it('verifies a receipt signed with a published key and refuses a changed one', async () => {
    const receipt = await new SignJWT({ sub: 'act_1', status: 'approved', resolved_by: 'totp' })
      .setProtectedHeader({ alg: 'ES256', typ: 'aa-receipt+jwt', kid: 'r1' })
      .sign(privateKey);
    expect(await verifyReceipt(receipt, jwks)).toMatchObject({ sub: 'act_1', resolved_by: 'totp' });
    const [h, , s] = receipt.split('.');
    const changed = [h, Buffer.from(JSON.stringify({ sub: 'act_1', status: 'denied' })).toString('base64url'), s].join(
      '.',
    );
    await expect(verifyReceipt(changed, jwks)).rejects.toThrow(/does not verify/);
    await expect(verifyReceipt(receipt, { keys: [] })).rejects.toThrow(/no published key 'r1'/);
  });

  it('accepts an intact chain and names the first broken event', async () => {
    const { events, head } = await chain(4);
    expect(await verifyChain(events, head, jwks)).toEqual({ ok: true, seq: 4 });
    const tampered = events.map((e) => (e.seq === 2 ? { ...e, data: { n: 20 } } : e));
    expect(await verifyChain(tampered, head, jwks)).toMatchObject({ ok: false, seq: 2 });
    expect(await verifyChain(events.slice(0, 3), head, jwks)).toMatchObject({ ok: false, seq: 4 });
    expect(await verifyChain(events, { ...head, seq: 3 }, jwks)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/signature covers/),
    });
  });
});

describe('device app verification of a chain retention cut', () => {
  async function signed(typ: string, body: Record<string, unknown>) {
    return new CompactSign(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: 'ES256', typ, kid: 'r1' })
      .sign(privateKey);
  }
  const checkpointOf = async (event: { seq: number; hash: string; at: string }, account = 'acc_1') => ({
    seq: event.seq,
    hash: event.hash,
    at: event.at,
    signature: await signed('aa-audit-checkpoint+jws', {
      account_id: account,
      seq: event.seq,
      hash: event.hash,
      at: event.at,
    }),
  });

  it('verifies what is left from the checkpoint, and refuses one changed, of another account, or not linked', async () => {
    const { events, head } = await chain(5);
    const checkpoint = await checkpointOf(events[1]!);
    expect(await verifyChain(events.slice(2), head, jwks, { checkpoint })).toEqual({ ok: true, seq: 5 });
    expect(
      await verifyChain(events.slice(2), head, jwks, { checkpoint: { ...checkpoint, hash: events[0]!.hash } }),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/checkpoint differs/),
    });
    expect(
      await verifyChain(events.slice(2), head, jwks, { checkpoint: await checkpointOf(events[1]!, 'acc_2') }),
    ).toMatchObject({
      ok: false,
    });
    expect(await verifyChain(events.slice(3), head, jwks, { checkpoint })).toMatchObject({ ok: false, seq: 3 });
    expect(
      await verifyChain(events.slice(2), head, jwks, { checkpoint: await checkpointOf(events[0]!) }),
    ).toMatchObject({
      ok: false,
      seq: 2,
      reason: 'missing',
    });
  });

  it('accepts a head at the checkpoint when every event was dropped', async () => {
    const { events } = await chain(2);
    const last = events[1]!;
    const head = {
      seq: last.seq,
      hash: last.hash,
      at: last.at,
      signature: await signed('aa-audit-head+jws', {
        account_id: 'acc_1',
        seq: last.seq,
        hash: last.hash,
        at: last.at,
      }),
    };
    expect(await verifyChain([], head, jwks, { checkpoint: await checkpointOf(last) })).toEqual({ ok: true, seq: 2 });
    expect(await verifyChain([], head, jwks)).toMatchObject({ ok: false, seq: 1 });
  });
});
