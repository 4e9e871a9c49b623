import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { openEventStream } from '../harness/sse.js';
import { startStack, type Stack } from '../harness/stack.js';

// Members of an account: invitations, joining with a code (single use, expiring, rate limited), roles changed and
// members removed at once on every gateway replica, the last owner kept.
const { natsUrl } = inject('infra');

describe.skipIf(!natsUrl)(
  `members, invites and joining (processes over NATS${natsUrl ? '' : '; skipped: no NATS'})`,
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'processes', databaseUrl: db.url, natsUrl, name: 'members' });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    const join = (code: string, gateway = api) =>
      gateway.call('POST', '/members/join', { body: { code, device_name: 'phone' } });
    const patch = (device: string, id: string, body: unknown) =>
      api.call('PATCH', `/members/${id}`, { body, headers: { 'x-device-id': device } });

    it("a new account's first device is its owner's; the owner invites, the invited person joins from their phone", async () => {
      const acct = await api.newAccount();
      const owner = api.device(acct.device_id);
      const listed = await owner.get('/members');
      expect(listed.status).toBe(200);
      expect(listed.body.members).toEqual([
        expect.objectContaining({ name: 'Owner', role: 'owner', email: null, devices: 1, invite_pending: false }),
      ]);

      const before = Date.now();
      const invited = await owner.post('/members', { name: 'Dana', email: 'dana@example.com', role: 'approver' });
      expect(invited.status, JSON.stringify(invited.body)).toBe(200);
      expect(invited.body.member_id).toMatch(/^mem_/);
      expect(invited.body.invite.code).toMatch(/^inv_[A-Za-z0-9]{32}$/);
      const expires = Date.parse(invited.body.invite.expires_at);
      expect(expires - before).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
      expect(expires - before).toBeLessThan(7 * 24 * 3600_000 + 60_000);
      const pending = (await owner.get('/members')).body.members.find(
        (m: any) => m.member_id === invited.body.member_id,
      );
      expect(pending).toMatchObject({ name: 'Dana', email: 'dana@example.com', role: 'approver', devices: 0 });
      expect(pending.invite_pending).toBe(true);

      const joined = await join(invited.body.invite.code);
      expect(joined.status, JSON.stringify(joined.body)).toBe(200);
      expect(Object.keys(joined.body)).toEqual(['device_id']);
      const dana = api.device(joined.body.device_id);
      expect((await dana.get('/account')).body.account_id).toBe(acct.account_id);
      const after = (await owner.get('/members')).body.members.find((m: any) => m.member_id === invited.body.member_id);
      expect(after).toMatchObject({ devices: 1, invite_pending: false });
      // The joined device sets itself up as any device does: its own TOTP authenticator (the owner has one too), its
      // signing key, and another device of the same member.
      expect((await owner.post('/totp/enroll')).status).toBe(200);
      const totp = await dana.post('/totp/enroll');
      expect(totp.status, JSON.stringify(totp.body)).toBe(200);
      expect(totp.body.secret).toEqual(expect.any(String));
      expect((await dana.post('/totp/enroll')).status).toBe(409);
      const second = await dana.post('/devices', { device_name: 'tablet' });
      expect(second.status).toBe(200);
      const again = (await owner.get('/members')).body.members.find((m: any) => m.member_id === invited.body.member_id);
      expect(again.devices).toBe(2);
      // The code and device id never show up again.
      expect(JSON.stringify((await owner.get('/members')).body)).not.toContain(invited.body.invite.code);
      const audit = JSON.stringify((await owner.get('/audit')).body);
      expect(audit).toContain('member_added');
      expect(audit).toContain('member_joined');
      expect(audit).not.toContain(invited.body.invite.code);
      expect(audit).not.toContain(joined.body.device_id);
    });

    it('a code lets one device join: a second join, a wrong code and an expired one are refused', async () => {
      const acct = await api.newAccount();
      const owner = api.device(acct.device_id);
      const invited = (await owner.post('/members', { name: 'Sam', role: 'auditor' })).body;
      // Two joins racing with one code: exactly one device joins.
      const raced = await Promise.all([join(invited.invite.code), join(invited.invite.code)]);
      expect(raced.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(raced.find((r) => r.status === 409)!.body.code).toBe('invite_used');
      const used = await join(invited.invite.code);
      expect(used.status).toBe(409);
      expect(used.body).toMatchObject({ code: 'invite_used', detail: expect.stringMatching(/used already/) });

      for (const wrong of [`${invited.invite.code.slice(0, -1)}x`, 'inv_nope', 'not-a-code']) {
        const r = await join(wrong);
        expect(r.status, wrong).toBe(404);
        expect(r.body.code).toBe('invite_not_found');
      }
      expect((await api.call('POST', '/members/join', { body: {} })).status).toBe(400);

      const late = (await owner.post('/members', { name: 'Lee', role: 'approver' })).body;
      await db.sql`update actions.member_invites set expires_at = now() - interval '1 second'
                 where member_id = ${late.member_id}`;
      const expired = await join(late.invite.code);
      expect(expired.status).toBe(409);
      expect(expired.body.code).toBe('invite_expired');
      const lee = (await owner.get('/members')).body.members.find((m: any) => m.member_id === late.member_id);
      expect(lee).toMatchObject({ devices: 0, invite_pending: false });
    });

    it('joining is rate limited per client address (the budget of unauthenticated requests)', async () => {
      const limited = apiClient(await stack.addGateway({ RATE_LIMIT_IP: '3', TRUST_PROXY: '127.0.0.1' }));
      const from = (ip: string) => ({ body: { code: 'inv_guess' }, headers: { 'x-forwarded-for': ip } });
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await limited.call('POST', '/members/join', from('203.0.113.9')));
      expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 429]);
      expect(answers[3]!.body.code).toBe('rate_limited');
      expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address has its own budget.
      expect((await limited.call('POST', '/members/join', from('203.0.113.10'))).status).toBe(404);
    });

    it('validates the body: a role of the four, a name, an email', async () => {
      const acct = await api.newAccount();
      const owner = api.device(acct.device_id);
      for (const body of [
        { name: 'X', role: 'boss' },
        { role: 'admin' },
        { name: 'X', role: 'admin', email: 'nope' },
      ]) {
        const r = await owner.post('/members', body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.code).toBe('invalid_request');
      }
      await owner.post('/members', { name: 'A', role: 'admin', email: 'a@example.com' });
      const taken = await owner.post('/members', { name: 'B', role: 'admin', email: 'A@example.com' });
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('member_email_taken');
      expect((await patch(acct.device_id, 'mem_unknown', { name: 'Z' })).body.code).toBe('member_not_found');
      expect((await patch(acct.device_id, 'mem_unknown', {})).status).toBe(400);
    });

    it('keeps an owner: the last one is neither removed nor demoted (409); only an owner makes or removes one (403)', async () => {
      const acct = await api.newAccount();
      const owner = api.device(acct.device_id);
      const me = (await owner.get('/members')).body.members[0].member_id;
      const removeSelf = await owner.delete(`/members/${me}`);
      expect(removeSelf.status).toBe(409);
      expect(removeSelf.body.code).toBe('last_owner');
      const demote = await patch(acct.device_id, me, { role: 'admin' });
      expect(demote.status).toBe(409);
      expect(demote.body.code).toBe('last_owner');
      expect((await patch(acct.device_id, me, { name: 'Alex' })).body).toMatchObject({ name: 'Alex', role: 'owner' });

      const admin = await inviteAndJoin(api, acct.device_id, { name: 'Ada', role: 'admin' });
      const adminInvitesOwner = await api.device(admin.device_id).post('/members', { name: 'O2', role: 'owner' });
      expect(adminInvitesOwner.status).toBe(403);
      expect(adminInvitesOwner.body).toMatchObject({
        code: 'role_forbidden',
        detail: expect.stringMatching(/admin role/),
      });
      expect((await api.device(admin.device_id).delete(`/members/${me}`)).status).toBe(403);
      expect((await patch(admin.device_id, admin.member_id, { role: 'owner' })).status).toBe(403);
      // An admin manages the others.
      const approver = await inviteAndJoin(api, admin.device_id, { name: 'Pat', role: 'approver' });
      expect((await patch(admin.device_id, approver.member_id, { role: 'auditor' })).body.role).toBe('auditor');

      // With a second owner, the first may step down.
      expect((await patch(acct.device_id, admin.member_id, { role: 'owner' })).body.role).toBe('owner');
      expect((await patch(acct.device_id, me, { role: 'approver' })).body.role).toBe('approver');
      expect((await owner.post('/rules', { name: 'r', decision: 'auto_approve' })).status).toBe(403);
      expect((await api.device(admin.device_id).delete(`/members/${me}`)).status).toBe(200);
      expect((await owner.get('/account')).status).toBe(401);
    });

    it('removing a member stops their devices at once on every gateway; a new role applies at once too', async () => {
      const otherUrl = await stack.addGateway();
      const other = apiClient(otherUrl);
      const acct = await api.newAccount();
      const dana = await inviteAndJoin(api, acct.device_id, { name: 'Dana', role: 'approver' });
      const tablet = (await api.device(dana.device_id).post('/devices', { device_name: 'tablet' })).body.device_id;
      // Both gateways know (have cached) both of Dana's devices.
      for (const gateway of [api, other])
        for (const device of [dana.device_id, tablet])
          expect((await gateway.device(device).get('/pending')).status).toBe(200);

      // Her tablet's live stream is open on the other gateway: a change of her role ends it there at once (the app
      // reconnects with what the new role may be sent), and so does her removal (the reconnection is refused).
      const streamOf = (device: string) => openEventStream(`${otherUrl}/device/events`, { 'x-device-id': device });
      const approverStream = await streamOf(tablet);
      expect(approverStream.status).toBe(200);

      // Demoted to auditor on one gateway: the other refuses her /pending at once, and lets her read the audit trail.
      const demotedAt = performance.now();
      expect((await patch(acct.device_id, dana.member_id, { role: 'auditor' })).status).toBe(200);
      expect((await approverStream.ended) - demotedAt).toBeLessThan(1000);
      // An auditor has no live stream of requests to answer.
      const reconnected = await streamOf(tablet);
      expect(reconnected.status).toBe(403);
      const refusedAt = await firstAnswer(() => other.device(tablet).get('/pending'), 403);
      expect(refusedAt).toBeLessThan(500);
      expect((await other.device(tablet).get('/pending')).body.code).toBe('role_forbidden');
      expect((await other.device(tablet).get('/audit')).status).toBe(200);

      // An approver again, her stream open again (once the other gateway has heard of the new role).
      expect((await patch(acct.device_id, dana.member_id, { role: 'approver' })).status).toBe(200);
      let stream = await streamOf(tablet);
      for (let tries = 0; stream.status !== 200 && tries < 100; tries++) {
        await sleep(10);
        stream = await streamOf(tablet);
      }
      expect(stream.status).toBe(200);

      // Removed on one gateway: both of her devices are refused on the other at once, her open stream ended.
      const removedAt = performance.now();
      const removed = await api.device(acct.device_id).delete(`/members/${dana.member_id}`);
      expect((await stream.ended) - removedAt).toBeLessThan(1000);
      expect((await streamOf(tablet)).status).toBe(401);
      expect(removed.body).toEqual({ deleted: true, id: dana.member_id });
      for (const device of [dana.device_id, tablet]) {
        expect(await firstAnswer(() => other.device(device).get('/audit'), 401)).toBeLessThan(500);
        expect((await api.device(device).get('/audit')).status).toBe(401);
      }
      const members = (await api.device(acct.device_id).get('/members')).body.members;
      expect(members.map((m: any) => m.member_id)).not.toContain(dana.member_id);
      expect((await api.device(acct.device_id).delete(`/members/${dana.member_id}`)).status).toBe(404);
    });
  },
);

/** Milliseconds until `call` first answers `status` (polled every 5 ms, up to 2 s; Infinity if it never does). */
async function firstAnswer(call: () => Promise<{ status: number }>, status: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < 2000) {
    if ((await call()).status === status) return Date.now() - start;
    await sleep(5);
  }
  return Number.POSITIVE_INFINITY;
}
