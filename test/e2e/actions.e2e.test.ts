import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`action requests end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'actions' });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('creates an action, the device approves it, the agent reads approved/biometric', async () => {
      const agent = api.agent(acct.api_key);
      const created = await agent.post('/actions', { ...purchase, metadata: { order: 'A-1' } });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        status: 'pending',
        action_type: 'purchase',
        title: 'Buy a book',
        amount: 12.5,
        amount_cents: 1250,
        currency: 'USD',
        risk_level: 'medium',
        reversible: true,
        content_hash: null,
        rule_applied: null,
        metadata: { order: 'A-1' },
      });
      expect(created.body.id).toMatch(/^act_/);
      expect(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)).toBe(300_000);

      const approved = await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ status: 'approved', resolved_by: 'biometric' });

      const read = await agent.get(`/actions/${created.body.id}`);
      expect(read.body).toMatchObject({
        id: created.body.id,
        status: 'approved',
        resolved_by: 'biometric',
        metadata: { order: 'A-1' },
      });
      expect(Date.parse(read.body.resolved_at)).toBeGreaterThan(0);
    });

    it('rejects bad input with 400 and a detail naming the field', async () => {
      const agent = api.agent(acct.api_key);
      const cases: Array<[unknown, RegExp]> = [
        [{ title: 'x' }, /^action_type: is required/],
        [{ action_type: 'teleport', title: 'x' }, /^action_type: invalid option/],
        [{ action_type: 'purchase' }, /^title: is required/],
        [{ action_type: 'purchase', title: 7 }, /^title: /],
        [{ action_type: 'purchase', title: 'x'.repeat(201) }, /^title: .*200/],
        [{ action_type: 'purchase', title: 'x', description: 'd'.repeat(2001) }, /^description: /],
        [{ action_type: 'purchase', title: 'x', recipient: 'r'.repeat(501) }, /^recipient: /],
        [{ action_type: 'purchase', title: 'x', risk_level: 'extreme' }, /^risk_level: /],
        [{ action_type: 'purchase', title: 'x', amount: -5 }, /^amount: must be positive/],
        [{ action_type: 'purchase', title: 'x', amount: '5' }, /^amount: /],
        [{ action_type: 'purchase', title: 'x', currency: 'usdollars' }, /^currency: /],
        [{ action_type: 'purchase', title: 'x', currency: 'XYZ' }, /^currency: is not an ISO 4217/],
        [{ action_type: 'purchase', title: 'x', expires_in_seconds: 29 }, /^expires_in_seconds: /],
        [{ action_type: 'purchase', title: 'x', expires_in_seconds: 3601 }, /^expires_in_seconds: /],
        [{ action_type: 'purchase', title: 'x', expires_in_seconds: 60.5 }, /^expires_in_seconds: /],
        [{ action_type: 'purchase', title: 'x', reversible: 'yes' }, /^reversible: /],
        [
          {
            action_type: 'purchase',
            title: 'x',
            metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
          },
          /^metadata: must have at most 20 keys/,
        ],
        [
          { action_type: 'purchase', title: 'x', metadata: { big: 'x'.repeat(8200) } },
          /^metadata: must serialize to at most 8192 bytes/,
        ],
        [{ action_type: 'purchase', title: 'x', metadata: [1, 2] }, /^metadata: /],
        [{ action_type: 'purchase', title: 'x', callback_url: 'ftp://example.com/hook' }, /^callback_url: /],
        [
          { action_type: 'purchase', title: 'x', callback_url: 'http://example.com/hook' },
          /^callback_url: must be an https URL/,
        ],
        [[1, 2, 3], /^body: /],
      ];
      for (const [body, detail] of cases) {
        const r = await agent.post('/actions', body);
        expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(r.body.detail, JSON.stringify(body).slice(0, 80)).toMatch(detail);
      }
      const malformed = await api.call('POST', '/actions', {
        raw: '{"action_type": "purchase",',
        headers: { 'x-api-key': acct.api_key, 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail).toMatch(/^Malformed JSON body/);
      const missing = await api.call('POST', '/actions', { headers: { 'x-api-key': acct.api_key } });
      expect(missing.status).toBe(400);
      expect(missing.body.detail).toMatch(/^body: is required/);
    });

    it('normalises currency and accepts explicit nulls for optional fields', async () => {
      const r = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: 'x',
        amount: 10.005,
        currency: 'eur',
        description: null,
        metadata: null,
        callback_url: 'https://example.com/hook',
      });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        currency: 'EUR',
        amount_cents: 1001,
        description: null,
        metadata: {},
        callback_url: 'https://example.com/hook',
      });
    });

    it('answers transport errors with JSON details: 401, 404, 405, 413, 415', async () => {
      const noKey = await api.call('GET', '/actions');
      expect(noKey).toMatchObject({ status: 401, body: { detail: 'Missing X-API-Key header' } });
      const badKey = await api.call('GET', '/actions', {
        headers: { 'x-api-key': 'aa_abcdefghijkl_abcdefghijklmnopqrstuvwxyzABCDEF' },
      });
      expect(badKey).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
      const deviceOnAgentRoute = await api.call('GET', '/actions', { headers: { 'x-device-id': acct.device_id } });
      expect(deviceOnAgentRoute.status).toBe(401);
      const agentOnDeviceRoute = await api.call('GET', '/pending', { headers: { 'x-api-key': acct.api_key } });
      expect(agentOnDeviceRoute).toMatchObject({ status: 401, body: { detail: 'Missing X-Device-Id header' } });
      const badDevice = await api.call('GET', '/pending', { headers: { 'x-device-id': 'dev_nope' } });
      expect(badDevice).toMatchObject({ status: 401, body: { detail: 'Invalid device ID' } });

      const unknownRoute = await api.call('GET', '/nothing-here');
      expect(unknownRoute.status).toBe(404);
      expect(unknownRoute.body.detail).toMatch(/No route GET/);
      const wrongMethod = await api.call('PUT', '/actions', { headers: { 'x-api-key': acct.api_key } });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toContain('POST');
      expect(wrongMethod.body.detail).toMatch(/not allowed/);

      const huge = await api.call('POST', '/actions', {
        body: { action_type: 'system', title: 'x', description: 'y'.repeat(70_000) },
        headers: { 'x-api-key': acct.api_key },
      });
      expect(huge.status).toBe(413);
      expect(huge.body.detail).toMatch(/65536-byte limit/);
      const text = await api.call('POST', '/actions', {
        raw: 'hello',
        headers: { 'x-api-key': acct.api_key, 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      expect(text.body.detail).toMatch(/application\/json/);
    });

    it("isolates agents and accounts: another agent's or account's request is a 404", async () => {
      const mine = await api.agent(acct.api_key).post('/actions', purchase);
      const second = await api.device(acct.device_id).post('/agents', { name: 'second agent' });
      expect(second.status).toBe(200);
      expect(second.body.api_key).toMatch(/^aa_/);
      const otherAgent = await api.agent(second.body.api_key).get(`/actions/${mine.body.id}`);
      expect(otherAgent.status).toBe(404);
      expect(otherAgent.body.detail).toBe(`Action request '${mine.body.id}' not found`);
      const otherList = await api.agent(second.body.api_key).get('/actions');
      expect(otherList.body.actions).toEqual([]);

      const stranger = await api.newAccount();
      expect((await api.agent(stranger.api_key).get(`/actions/${mine.body.id}`)).status).toBe(404);
      expect((await api.device(stranger.device_id).post(`/actions/${mine.body.id}/approve`)).status).toBe(404);
      expect((await api.device(stranger.device_id).get('/pending')).body.requests).toEqual([]);
      expect((await api.agent(acct.api_key).get('/actions/act_doesnotexist')).status).toBe(404);
    });

    it("lists an agent's requests newest first with limit, status and action_type filters", async () => {
      const fresh = await api.newAccount();
      const agent = api.agent(fresh.api_key);
      const ids: string[] = [];
      for (const type of ['purchase', 'communication', 'purchase'])
        ids.push((await agent.post('/actions', { action_type: type, title: type })).body.id);
      await api.device(fresh.device_id).post(`/actions/${ids[0]}/deny`, { reason: 'no' });
      expect((await agent.get('/actions')).body.actions.map((a: { id: string }) => a.id)).toEqual([...ids].reverse());
      expect((await agent.get('/actions?limit=2')).body.actions).toHaveLength(2);
      expect((await agent.get('/actions?action_type=purchase')).body.actions.map((a: { id: string }) => a.id)).toEqual([
        ids[2],
        ids[0],
      ]);
      const denied = (await agent.get('/actions?status=denied')).body.actions;
      expect(denied).toHaveLength(1);
      expect(denied[0]).toMatchObject({ id: ids[0], status: 'denied', resolved_by: 'user', reason: 'no' });
      for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'status=done', 'action_type=x']) {
        const r = await agent.get(`/actions?${bad}`);
        expect(r.status, bad).toBe(400);
        expect(r.body.detail, bad).toMatch(new RegExp(`^${bad.split('=')[0]}: `));
      }
    });

    it('pages through a list with next_cursor: every request once, in order, with and without filters', async () => {
      const fresh = await api.newAccount();
      const agent = api.agent(fresh.api_key);
      const ids: string[] = [];
      // Created concurrently, so several share a creation time to the microsecond's neighbourhood; the id breaks ties.
      for (const batch of [0, 1]) {
        const made = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            agent.post('/actions', { action_type: i % 2 ? 'legal' : 'purchase', title: `p${batch}${i}` }),
          ),
        );
        ids.push(...made.map((r) => r.body.id as string));
      }
      const all = (await agent.get('/actions')).body;
      expect(all.next_cursor).toBeNull();
      const walk = async (query: string) => {
        const seen: string[] = [];
        let url = `/actions?limit=3${query}`;
        for (let pages = 0; pages < 10; pages++) {
          const page = await agent.get(url);
          expect(page.status).toBe(200);
          seen.push(...page.body.actions.map((a: { id: string }) => a.id));
          if (!page.body.next_cursor) return seen;
          url = `/actions?limit=3${query}&cursor=${encodeURIComponent(page.body.next_cursor)}`;
        }
        throw new Error('more pages than requests');
      };
      expect(await walk('')).toEqual(all.actions.map((a: { id: string }) => a.id));
      expect((await walk('')).sort()).toEqual([...ids].sort());
      expect(await walk('&action_type=legal')).toEqual(
        all.actions.filter((a: { action_type: string }) => a.action_type === 'legal').map((a: { id: string }) => a.id),
      );
      expect(await walk('&status=pending')).toHaveLength(8);
      for (const bad of [
        'nonsense',
        Buffer.from("2026-01-01T00:00:00.000000Z|act_x' or 1=1").toString('base64url'),
        'x'.repeat(201),
      ]) {
        const r = await agent.get(`/actions?cursor=${bad}`);
        expect(r.status, bad).toBe(400);
        expect(r.body.detail, bad).toMatch(/^cursor: /);
      }
    });

    it('shows the device its pending requests, critical first, then oldest first', async () => {
      const fresh = await api.newAccount();
      const agent = api.agent(fresh.api_key);
      const make = async (risk: string) =>
        (
          await agent.post('/actions', {
            action_type: 'system',
            title: risk,
            risk_level: risk,
            description: 'why',
            recipient: 'ops',
          })
        ).body.id as string;
      const low = await make('low');
      const crit1 = await make('critical');
      const med = await make('medium');
      const crit2 = await make('critical');
      const pending = await api.device(fresh.device_id).get('/pending');
      expect(pending.status).toBe(200);
      expect(pending.body.requests.map((r: { id: string }) => r.id)).toEqual([crit1, crit2, med, low]);
      expect(pending.body.requests[0]).toMatchObject({
        agent_name: 'default',
        description: 'why',
        recipient: 'ops',
        status: 'pending',
        amount_cents: null,
      });
    });

    itBesideTheService('approves and denies once: 409 afterwards, exactly one winner when devices race', async () => {
      const device = api.device(acct.device_id);
      const id = (await api.agent(acct.api_key).post('/actions', purchase)).body.id;
      const denied = await device.post(`/actions/${id}/deny`, { reason: 'too expensive' });
      expect(denied.body).toMatchObject({ status: 'denied', resolved_by: 'user', reason: 'too expensive' });
      const again = await device.post(`/actions/${id}/approve`);
      expect(again).toMatchObject({ status: 409, body: { detail: "Action request is 'denied', not pending" } });

      const second = (await device.post('/devices', { device_name: 'tablet' })).body;
      expect(second.device_id).toMatch(/^dev_/);
      const raced = (await api.agent(acct.api_key).post('/actions', purchase)).body.id;
      const attempts = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api.device(i % 2 ? second.device_id : acct.device_id).post(`/actions/${raced}/${i % 3 ? 'approve' : 'deny'}`),
        ),
      );
      expect(attempts.filter((r) => r.status === 200)).toHaveLength(1);
      expect(attempts.filter((r) => r.status === 409)).toHaveLength(9);
      const trail = await db.sql`select event from actions.audit_events where request_id = ${raced} order by id`;
      expect(trail.map((r) => r.event)).toHaveLength(2);
    });

    it('validates approve and deny bodies; wallet pay needs an amount; TOTP without enrolment is 403', async () => {
      const device = api.device(acct.device_id);
      const agent = api.agent(acct.api_key);
      const noAmount = (await agent.post('/actions', { action_type: 'communication', title: 'mail' })).body.id;
      expect(await device.post(`/actions/${noAmount}/deny`, { reason: 'r'.repeat(501) })).toMatchObject({
        status: 400,
        body: { detail: expect.stringMatching(/^reason: /) },
      });
      expect(await device.post(`/actions/${noAmount}/approve`, { payment_method: 'wallet_pay' })).toMatchObject({
        status: 400,
        body: { detail: expect.stringMatching(/^payment_method: /) },
      });
      expect(await device.post(`/actions/${noAmount}/approve`, { payment_method: 'cash' })).toMatchObject({
        status: 400,
      });
      expect(await device.post(`/actions/${noAmount}/approve`, { totp_code: '123456' })).toMatchObject({
        status: 403,
        body: { detail: expect.stringMatching(/TOTP/) },
      });
      expect(await device.post('/actions/act_missing/approve')).toMatchObject({ status: 404 });
      const paid = (await agent.post('/actions', purchase)).body.id;
      expect((await device.post(`/actions/${paid}/approve`, { payment_method: 'wallet_pay' })).body).toMatchObject({
        status: 'approved',
        resolved_by: 'wallet_pay',
      });
    });

    itBesideTheService(
      'expires overdue requests lazily on read and by the sweeper, with resolved_by system',
      async () => {
        const agent = api.agent(acct.api_key);
        const lazy = (await agent.post('/actions', { ...purchase, expires_in_seconds: 30 })).body.id;
        const swept = (await agent.post('/actions', { ...purchase, expires_in_seconds: 30 })).body.id;
        // Move the clock of these two requests instead of waiting 30 s: expiry compares expires_at with now().
        await db.sql`update actions.requests set expires_at = now() - interval '1 second' where id in (${lazy}, ${swept})`;
        const read = await agent.get(`/actions/${lazy}`);
        expect(read.body).toMatchObject({ status: 'expired', resolved_by: 'system' });
        expect(await api.device(acct.device_id).post(`/actions/${lazy}/approve`)).toMatchObject({
          status: 409,
          body: { detail: "Action request is 'expired', not pending" },
        });
        await expect
          .poll(async () => (await db.sql`select status from actions.requests where id = ${swept}`)[0]?.status, {
            timeout: 5000,
          })
          .toBe('expired');
        const trail =
          await db.sql`select event, actor from actions.audit_events where request_id = ${swept} order by id`;
        expect(trail.map((r) => `${r.event}:${r.actor}`)).toEqual([
          expect.stringMatching(/^created:agent:/),
          'expired:system',
        ]);
      },
    );

    itBesideTheService('keeps metadata encrypted at rest and the audit trail append-only', async () => {
      const id = (
        await api.agent(acct.api_key).post('/actions', { ...purchase, metadata: { secret_plan: 'moonshot-4711' } })
      ).body.id;
      const [row] = await db.sql`select metadata_enc from actions.requests where id = ${id}`;
      expect(row!.metadata_enc).toMatch(/^v1:t1:/);
      expect(row!.metadata_enc).not.toContain('moonshot');
      await expect(db.sql`update actions.audit_events set actor = 'someone' where request_id = ${id}`).rejects.toThrow(
        /append-only/,
      );
      await expect(db.sql`delete from actions.audit_events where request_id = ${id}`).rejects.toThrow(/append-only/);
      const [keys] = await db.sql`select count(*)::int as n from actions.agents where key_hash like '$argon2id$%'`;
      expect(keys!.n).toBeGreaterThan(0);
    });

    it('revokes an agent key at once (401 afterwards), even when it was cached', async () => {
      const device = api.device(acct.device_id);
      const created = (await device.post('/agents', { name: 'temp' })).body;
      expect((await api.agent(created.api_key).get('/actions')).status).toBe(200);
      expect((await device.get('/agents')).body.agents.map((a: { agent_id: string }) => a.agent_id)).toContain(
        created.agent_id,
      );
      expect(await device.delete(`/agents/${created.agent_id}`)).toMatchObject({
        status: 200,
        body: { deleted: true, id: created.agent_id },
      });
      await expect
        .poll(async () => (await api.agent(created.api_key).get('/actions')).status, { timeout: 2000 })
        .toBe(401);
      expect((await device.delete(`/agents/${created.agent_id}`)).status).toBe(404);
      expect((await device.post('/agents', { name: '' })).status).toBe(400);
    });

    it('answers hostile input with a 4xx and a detail, never a 500', async () => {
      const agentHeaders = { 'x-api-key': acct.api_key };
      const nul = await api.agent(acct.api_key).post('/actions', { action_type: 'system', title: 'a\u0000b' });
      expect(nul).toMatchObject({ status: 400, body: { detail: 'title: must not contain NUL characters' } });
      // No id of ours holds a control character: such an id is simply not found.
      expect((await api.call('GET', '/actions/act_%00', { headers: agentHeaders })).status).toBe(404);
      expect(await api.call('GET', `/actions/${'x'.repeat(300)}`, { headers: agentHeaders })).toMatchObject({
        status: 414,
        body: { detail: expect.any(String) },
      });
      expect(await api.call('GET', '/actions/%ff', { headers: agentHeaders })).toMatchObject({
        status: 400,
        body: { detail: expect.stringMatching(/percent-encoding/) },
      });
      expect((await api.call('GET', "/actions/act_'%20or%201=1", { headers: agentHeaders })).status).toBe(404);
      expect((await api.call('GET', '/actions?limit=1&limit=2', { headers: agentHeaders })).status).toBe(400);

      // A Content-Length that promises less than is sent: Node's HTTP parser refuses it before fastify sees it.
      const { hostname, port } = new URL(stack.baseUrl);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            'POST /api/v1/actions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n{"a":1}',
          );
        });
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400/);
      expect(raw).toContain('{"code":"malformed_http","detail":"Malformed HTTP request"}');
    });

    it('never writes API keys or device ids to the logs', () => {
      const logs = stack.logs();
      expect(logs).toContain('action approved'); // the logs are there to search
      expect(logs).not.toContain(acct.api_key);
      expect(logs).not.toContain(acct.device_id);
    });
  });
}
