import { generateKeyPairSync } from 'node:crypto';
import { CompactSign, exportJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { auditEventHash as serviceHash, requestHash } from '@agent-auth/contracts';
import {
  auditEventHash,
  requestHashOf,
  verifyAuditChain,
  verifyReceipt,
  VerificationError,
  type AuditEvent,
} from './verify.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };

function chain(n: number): AuditEvent[] {
  const events: AuditEvent[] = [];
  let prev = '0'.repeat(64);
  for (let seq = 1; seq <= n; seq++) {
    const event = {
      seq,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      request_id: `act_${seq}`,
      type: 'created',
      actor: 'agent:agt_1',
      data: { n: seq },
      prev_hash: prev,
    };
    prev = auditEventHash(event);
    events.push({ ...event, hash: prev });
  }
  return events;
}

async function headOf(event: AuditEvent, typ = 'aa-audit-head+jws') {
  const body = { account_id: 'acc_1', seq: event.seq, hash: event.hash, at: event.at };
  const signature = await new CompactSign(new TextEncoder().encode(JSON.stringify(body)))
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ })
    .sign(privateKey);
  return { seq: event.seq, hash: event.hash, at: event.at, signature };
}

describe('the client computes the same hashes as the service', () => {
  it('audit events and request hashes', () => {
    const [event] = chain(1);
    const { hash: _h, ...rest } = event!;
    expect(auditEventHash(rest)).toBe(serviceHash(rest));
    const shown = {
      action_type: 'purchase',
      title: 'T',
      description: null,
      risk_level: 'low',
      reversible: true,
      amount_cents: 5,
      currency: 'USD',
      recipient: null,
      metadata: { z: 1, a: [1, 'x'] },
    };
    expect(requestHashOf(shown)).toBe(requestHash(shown));
  });
});

describe('verifyReceipt', () => {
  it('returns the claims of a receipt signed by a key of the set, refuses another typ or key', async () => {
    const receipt = await new SignJWT({ sub: 'act_1', status: 'approved' })
      .setProtectedHeader({ alg: 'ES256', typ: 'aa-receipt+jwt', kid: 'k1' })
      .sign(privateKey);
    expect(await verifyReceipt(receipt, jwks)).toMatchObject({ sub: 'act_1', status: 'approved' });
    const plainJwt = await new SignJWT({ sub: 'act_1' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);
    await expect(verifyReceipt(plainJwt, jwks)).rejects.toBeInstanceOf(VerificationError);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const forged = await new SignJWT({ sub: 'act_1' })
      .setProtectedHeader({ alg: 'ES256', typ: 'aa-receipt+jwt', kid: 'k1' })
      .sign(other);
    await expect(verifyReceipt(forged, jwks)).rejects.toThrow(/does not verify/);
  });
});

describe('verifyAuditChain', () => {
  it('accepts an intact chain under its signed head', async () => {
    const events = chain(5);
    expect(await verifyAuditChain(events, await headOf(events[4]!), jwks)).toEqual({
      account_id: 'acc_1',
      head_seq: 5,
      head_hash: events[4]!.hash,
      events: 5,
    });
  });

  it('names the first broken event: changed content, relinked hash, a gap, a truncated export', async () => {
    const events = chain(6);
    const head = await headOf(events[5]!);
    const changed = events.map((e) => (e.seq === 3 ? { ...e, data: { n: 99 } } : e));
    await expect(verifyAuditChain(changed, head, jwks)).rejects.toMatchObject({
      seq: 3,
      message: expect.stringMatching(/content does not match/),
    });
    const rehashed = changed.map((e) => (e.seq === 3 ? { ...e, hash: auditEventHash(e) } : e));
    await expect(verifyAuditChain(rehashed, head, jwks)).rejects.toMatchObject({
      seq: 4,
      message: expect.stringMatching(/prev_hash/),
    });
    await expect(
      verifyAuditChain(
        events.filter((e) => e.seq !== 4),
        head,
        jwks,
      ),
    ).rejects.toMatchObject({ seq: 4 });
    await expect(verifyAuditChain(events.slice(0, 4), head, jwks)).rejects.toMatchObject({
      message: expect.stringMatching(/head is at event 6/),
    });
  });

  it('refuses a head whose signature or fields do not hold', async () => {
    const events = chain(2);
    const head = await headOf(events[1]!);
    await expect(verifyAuditChain(events, { ...head, seq: 1 }, jwks)).rejects.toThrow(
      /differs from what its signature covers/,
    );
    await expect(verifyAuditChain(events, await headOf(events[1]!, 'aa-receipt+jwt'), jwks)).rejects.toThrow(/typ/);
  });
});

describe('verifyAuditChain from a checkpoint (a chain retention cut)', () => {
  async function checkpointOf(event: AuditEvent, more: { typ?: string; account_id?: string } = {}) {
    const body = { account_id: more.account_id ?? 'acc_1', seq: event.seq, hash: event.hash, at: event.at };
    const signature = await new CompactSign(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: more.typ ?? 'aa-audit-checkpoint+jws' })
      .sign(privateKey);
    return { seq: event.seq, hash: event.hash, at: event.at, signature };
  }

  it('verifies the events after the checkpoint, linked to its hash', async () => {
    const events = chain(6);
    const checkpoint = await checkpointOf(events[2]!);
    expect(await verifyAuditChain(events.slice(3), await headOf(events[5]!), jwks, { checkpoint })).toEqual({
      account_id: 'acc_1',
      head_seq: 6,
      head_hash: events[5]!.hash,
      events: 3,
      checkpoint_seq: 3,
    });
    // Every event dropped: the head is the checkpoint's.
    expect(await verifyAuditChain([], await headOf(events[2]!), jwks, { checkpoint })).toMatchObject({
      head_seq: 3,
      events: 0,
    });
  });

  it('refuses a checkpoint changed, signed as something else or for another account, and a chain not after it', async () => {
    const events = chain(6);
    const head = await headOf(events[5]!);
    const kept = events.slice(3);
    const checkpoint = await checkpointOf(events[2]!);
    await expect(
      verifyAuditChain(kept, head, jwks, { checkpoint: { ...checkpoint, hash: 'f'.repeat(64) } }),
    ).rejects.toThrow(/checkpoint differs from what its signature covers/);
    await expect(
      verifyAuditChain(kept, head, jwks, { checkpoint: await checkpointOf(events[2]!, { typ: 'aa-audit-head+jws' }) }),
    ).rejects.toThrow(/typ/);
    await expect(
      verifyAuditChain(kept, head, jwks, { checkpoint: await checkpointOf(events[2]!, { account_id: 'acc_2' }) }),
    ).rejects.toThrow(/signed for account acc_2/);
    // Signed at another event: the first kept event's prev_hash no longer links to it.
    await expect(
      verifyAuditChain(kept, head, jwks, { checkpoint: await checkpointOf(events[1]!) }),
    ).rejects.toMatchObject({
      seq: 3,
    });
    await expect(verifyAuditChain(events.slice(2), head, jwks, { checkpoint })).rejects.toThrow(
      /before the checkpoint/,
    );
    // A head an auditor kept from before the cut cannot be checked against what is left.
    await expect(verifyAuditChain(kept, await headOf(events[1]!), jwks, { checkpoint })).rejects.toThrow(
      /lies before the checkpoint/,
    );
  });
});
