// Conditions on rules, the account's time zone, Cedar policies: what a holder says, decided at creation end to end.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

/** The hour and weekday now on a time zone's clock, as Intl tells them. */
function localNow(timezone: string, at = new Date()) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    hour: 'numeric',
    weekday: 'short',
  }).formatToParts(at);
  return {
    hour: Number(parts.find((p) => p.type === 'hour')!.value) % 24,
    weekday: parts.find((p) => p.type === 'weekday')!.value.toLowerCase(),
  };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`policy people can say (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'policy-language' });
      api = apiClient(stack.baseUrl);
    }, 180_000);
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    const must = <T = any>(r: { status: number; body: T }): T => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const rule = (acct: Account, body: Record<string, unknown>) =>
      api.device(acct.device_id).post('/rules', body).then(must);
    const policy = (acct: Account, name: string, cedar: string) =>
      api.device(acct.device_id).post('/policies', { name, cedar }).then(must);
    const ask = (acct: Account, body: Record<string, unknown>) =>
      api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'communication', title: 'A request', ...body })
        .then(must);

    it('decides by conditions: tool calls, recipients, merchants; first match wins, in order', async () => {
      const acct = await api.newAccount();
      await rule(acct, {
        name: 'nothing that deletes',
        decision: 'auto_deny',
        action_type: 'system',
        conditions: [{ field: 'title', op: 'glob', value: '*rm -*' }],
      });
      await rule(acct, {
        name: 'git status and npm test',
        decision: 'auto_approve',
        action_type: 'system',
        conditions: [
          { field: 'tool_name', op: 'eq', value: 'Bash' },
          { field: 'title', op: 'in', value: ['Run: git status', 'Run: npm test'] },
        ],
      });
      await rule(acct, {
        name: 'mail to colleagues',
        decision: 'auto_approve',
        action_type: 'communication',
        conditions: [{ field: 'recipient', op: 'suffix', value: '@ourcompany.com' }],
      });
      await rule(acct, {
        name: 'never this merchant',
        decision: 'auto_deny',
        action_type: 'purchase',
        conditions: [{ field: 'recipient', op: 'eq', value: 'Shady Goods Ltd' }],
      });
      await rule(acct, {
        name: 'small, cheap and from the ops team',
        decision: 'auto_approve',
        action_type: 'purchase',
        conditions: [
          { field: 'amount', op: 'lte', value: 20 },
          { field: 'metadata.team', op: 'eq', value: 'ops' },
          { field: 'risk_level', op: 'lt', value: 'high' },
          { field: 'currency', op: 'eq', value: 'usd' },
        ],
      });
      const bash = (title: string) => ({
        action_type: 'system',
        title,
        metadata: { tool_name: 'Bash', source: 'claude-code' },
      });

      expect(await ask(acct, bash('Run: git status'))).toMatchObject({
        status: 'approved',
        rule_applied: 'git status and npm test',
        resolved_by: 'rule:git status and npm test',
      });
      expect((await ask(acct, bash('Run: npm test'))).status).toBe('approved');
      expect((await ask(acct, bash('Run: git push'))).status).toBe('pending');
      expect(await ask(acct, bash('Run: rm -rf build'))).toMatchObject({
        status: 'denied',
        rule_applied: 'nothing that deletes',
      });
      // The same title from another tool is no Bash call.
      expect((await ask(acct, { ...bash('Run: git status'), metadata: { tool_name: 'Read' } })).status).toBe('pending');

      expect((await ask(acct, { recipient: 'ana@ourcompany.com' })).status).toBe('approved');
      expect((await ask(acct, { recipient: 'ana@ourcompany.com.evil.io' })).status).toBe('pending');
      expect((await ask(acct, {})).status).toBe('pending'); // no recipient: the suffix cannot hold

      const buy = (extra: Record<string, unknown>) =>
        ask(acct, { action_type: 'purchase', title: 'Buy', amount: 12, recipient: 'Paper Co', ...extra });
      expect(await buy({ recipient: 'Shady Goods Ltd', metadata: { team: 'ops' } })).toMatchObject({
        status: 'denied',
        rule_applied: 'never this merchant',
      });
      expect((await buy({ metadata: { team: 'ops' } })).status).toBe('approved');
      expect((await buy({ metadata: { team: 'ops' }, amount: 20.01 })).status).toBe('pending');
      expect((await buy({ metadata: { team: 'sales' } })).status).toBe('pending');
      expect((await buy({ metadata: { team: 'ops' }, risk_level: 'high' })).status).toBe('pending');
      expect((await buy({ metadata: { team: 'ops' }, currency: 'EUR' })).status).toBe('pending');
    });

    it('shows conditions on the rules that have them, and only there', async () => {
      const acct = await api.newAccount();
      await rule(acct, { name: 'plain', decision: 'auto_approve', action_type: 'scheduling' });
      await rule(acct, {
        name: 'with conditions',
        decision: 'auto_deny',
        conditions: [
          { field: 'currency', op: 'in', value: ['eur', 'gbp'] },
          { field: 'metadata.env', op: 'neq', value: 'staging' },
        ],
      });
      const { rules } = must(await api.device(acct.device_id).get('/rules'));
      expect(rules[0]).not.toHaveProperty('conditions');
      expect(rules[1].conditions).toEqual([
        { field: 'currency', op: 'in', value: ['EUR', 'GBP'] },
        { field: 'metadata.env', op: 'neq', value: 'staging' },
      ]);
    });

    it('refuses a bad condition with a 400 naming it', async () => {
      const acct = await api.newAccount();
      const refused = async (conditions: unknown) => {
        const r = await api.device(acct.device_id).post('/rules', { name: 'x', decision: 'auto_approve', conditions });
        expect(r.status).toBe(400);
        expect(r.body.code).toBe('invalid_request');
        return r.body.detail as string;
      };
      const ok = { field: 'title', op: 'eq', value: 'a' };
      expect(await refused([ok, ok, { field: 'title', op: 'matches', value: 'a' }])).toMatch(/^conditions\[2\]\.op: /);
      expect(await refused([{ field: 'payee', op: 'eq', value: 'a' }])).toMatch(/^conditions\[0\]\.field: /);
      expect(await refused([ok, { field: 'amount', op: 'lt', value: 'lots' }])).toBe(
        'conditions[1].value: must be a number for amount',
      );
      expect(await refused([{ field: 'amount', op: 'prefix', value: '1' }])).toMatch(/^conditions\[0\]\.op: /);
      expect(await refused([{ field: 'recipient', op: 'in', value: Array(51).fill('a') }])).toBe(
        'conditions[0].value: must have 1 to 50 values',
      );
      expect(await refused([{ field: 'title', op: 'glob', value: 'x'.repeat(201) }])).toBe(
        'conditions[0].value: must be at most 200 characters',
      );
      expect(await refused(Array(11).fill(ok))).toMatch(/^conditions: must have 1 to 10 conditions/);
      expect(await refused([])).toMatch(/^conditions: /);
      expect(must(await api.device(acct.device_id).get('/rules')).rules).toEqual([]);
    });

    it("reads local_hour and weekday on the account's time zone", async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      expect(must(await device.get('/account/settings'))).toEqual({ timezone: 'UTC' });
      const bad = await device.put('/account/settings', { timezone: 'Mars/Olympus_Mons' });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^timezone: must be an IANA time zone/);
      // Kiritimati is UTC+14: its day is never UTC's hour and rarely its weekday.
      expect(must(await device.put('/account/settings', { timezone: 'pacific/kiritimati' }))).toEqual({
        timezone: 'Pacific/Kiritimati',
      });
      const now = localNow('Pacific/Kiritimati');
      const next = localNow('Pacific/Kiritimati', new Date(Date.now() + 3_600_000));
      await rule(acct, {
        name: 'this hour there',
        decision: 'auto_approve',
        conditions: [
          { field: 'local_hour', op: 'in', value: [...new Set([now.hour, next.hour])] },
          { field: 'weekday', op: 'in', value: [...new Set([now.weekday, next.weekday])] },
        ],
      });
      expect((await ask(acct, {})).status).toBe('approved');
      // In UTC the same hour is 14 hours away.
      must(await device.put('/account/settings', { timezone: 'UTC' }));
      expect((await ask(acct, {})).status).toBe('pending');
    });

    it('Cedar policies: validated by Cedar on save, listed, deleted; the schema is published', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const schema = must(await device.get('/policies/schema'));
      expect(schema.schema).toContain('entity Agent;');
      expect(Object.keys((schema.schema_json[''] as { actions: object }).actions)).toContain('purchase');

      const refused = async (cedar: string) => {
        const r = await device.post('/policies', { name: 'x', cedar });
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body.code).toBe('invalid_policy');
        return r.body.detail as string;
      };
      expect(await refused('permit(principal, action, resource')).toMatch(/^cedar: unexpected end of input/);
      expect(await refused('permit(principal, action == Action::"purchse", resource);')).toMatch(
        /unrecognized action `Action::"purchse"`/,
      );
      expect(await refused('permit(principal, action, resource) when { context.amount_cents > 5 };')).toMatch(
        /optional attribute `amount_cents`/,
      );
      expect(await refused('permit(principal, action, resource) when { context.payee == "x" };')).toMatch(/payee/);
      expect(await refused('permit(principal, action, resource); forbid(principal, action, resource);')).toMatch(
        /exactly one policy/,
      );
      expect(await refused('permit(principal == ?principal, action, resource);')).toMatch(/template/);

      const created = await policy(acct, 'reads', 'permit(principal, action == Action::"data_access", resource);');
      expect(created).toMatchObject({ name: 'reads', policy_id: expect.stringMatching(/^pol_/) });
      expect(must(await device.get('/policies')).policies.map((p: { name: string }) => p.name)).toEqual(['reads']);
      expect((await ask(acct, { action_type: 'data_access' })).status).toBe('approved');
      expect(must(await device.delete(`/policies/${created.policy_id}`))).toEqual({
        deleted: true,
        id: created.policy_id,
      });
      expect((await device.delete(`/policies/${created.policy_id}`)).status).toBe(404);
      expect((await ask(acct, { action_type: 'data_access' })).status).toBe('pending');
      const other = await api.newAccount();
      const theirs = await policy(other, 'theirs', 'permit(principal, action, resource);');
      expect((await device.delete(`/policies/${theirs.policy_id}`)).body.code).toBe('policy_not_found');
    });

    it('Cedar comes after the ordered rules: a forbid denies, else a permit approves, else a person decides', async () => {
      const acct = await api.newAccount();
      await rule(acct, {
        name: 'calendar is fine',
        decision: 'auto_approve',
        action_type: 'scheduling',
      });
      await policy(acct, 'no scheduling at all', 'forbid(principal, action == Action::"scheduling", resource);');
      await policy(
        acct,
        'mail to the company',
        'permit(principal, action == Action::"communication", resource) when { context has recipient && context.recipient like "*@ourcompany.com" };',
      );
      await policy(
        acct,
        'nothing irreversible at night',
        'forbid(principal, action, resource) when { !context.reversible && (context.local_hour < 6 || context.local_hour >= 22) };',
      );
      await policy(
        acct,
        'not from the sandbox',
        'forbid(principal, action, resource) when { context.metadata.hasTag("env") && context.metadata.getTag("env") == "sandbox" };',
      );
      await policy(
        acct,
        'small purchases',
        'permit(principal, action == Action::"purchase", resource) when { context has amount_cents && context.amount_cents <= 2000 };',
      );

      // A rule that matches is the answer, whatever the policies say.
      expect(await ask(acct, { action_type: 'scheduling' })).toMatchObject({
        status: 'approved',
        rule_applied: 'calendar is fine',
      });
      expect(await ask(acct, { recipient: 'ana@ourcompany.com' })).toMatchObject({
        status: 'approved',
        rule_applied: 'mail to the company',
        resolved_by: 'policy:mail to the company',
      });
      // A forbid wins over a permit that matches too.
      expect(await ask(acct, { recipient: 'ana@ourcompany.com', metadata: { env: 'sandbox' } })).toMatchObject({
        status: 'denied',
        rule_applied: 'not from the sandbox',
        resolved_by: 'policy:not from the sandbox',
      });
      expect((await ask(acct, { recipient: 'eve@elsewhere.com' })).status).toBe('pending');
      expect((await ask(acct, { action_type: 'purchase', amount: 20 })).status).toBe('approved');
      expect((await ask(acct, { action_type: 'purchase', amount: 20.01 })).status).toBe('pending');
      expect((await ask(acct, { action_type: 'purchase' })).status).toBe('pending'); // no amount: no permit
      // At night on the account's clock, irreversible requests are denied.
      // A whole-hour zone where it is between 01:00 and 04:59 now (Etc/GMT-N is N hours east of UTC).
      const zones = Array.from({ length: 27 }, (_, i) => i - 12).map((n) =>
        n <= 0 ? `Etc/GMT+${-n}` : `Etc/GMT-${n}`,
      );
      const night = zones.find((tz) => localNow(tz).hour >= 1 && localNow(tz).hour < 5)!;
      must(await api.device(acct.device_id).put('/account/settings', { timezone: night }));
      expect(await ask(acct, { recipient: 'ana@ourcompany.com', reversible: false })).toMatchObject({
        status: 'denied',
        rule_applied: 'nothing irreversible at night',
      });
      expect((await ask(acct, { recipient: 'ana@ourcompany.com', reversible: true })).status).toBe('approved');
    });

    it("limits still come first: a Cedar permit spends within the account's limits", async () => {
      const acct = await api.newAccount();
      await policy(acct, 'purchases', 'permit(principal, action == Action::"purchase", resource);');
      must(await api.device(acct.device_id).post('/spending-limits', { period: 'daily', amount_limit: 25 }));
      expect(await ask(acct, { action_type: 'purchase', amount: 20 })).toMatchObject({
        status: 'approved',
        resolved_by: 'policy:purchases',
      });
      expect(await ask(acct, { action_type: 'purchase', amount: 10 })).toMatchObject({
        status: 'denied',
        spending_limit_exceeded: { limit: 25, spent: 20, requested: 10 },
      });
    });

    it("receipts' policy_version covers the Cedar policies and the time zone", async () => {
      const acct = await api.newAccount();
      await rule(acct, { name: 'approve mail', decision: 'auto_approve', action_type: 'communication' });
      const version = async () => {
        const created = await ask(acct, {});
        const [row] = await db.sql`select policy_version from actions.requests where id = ${created.id}`;
        return row!.policy_version as string;
      };
      const first = await version();
      expect(await version()).toBe(first);
      await policy(acct, 'p', 'forbid(principal, action == Action::"legal", resource);');
      const withPolicy = await version();
      expect(withPolicy).not.toBe(first);
      must(await api.device(acct.device_id).put('/account/settings', { timezone: 'Europe/Paris' }));
      expect(await version()).not.toBe(withPolicy);
    });

    it('replays a draft over the history exactly as a create would decide with the draft saved', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const helper = must(await device.post('/agents', { name: 'helper' }));
      await rule(acct, {
        name: 'deny deletes',
        decision: 'auto_deny',
        conditions: [{ field: 'title', op: 'contains', value: 'rm -' }],
      });
      await rule(acct, {
        name: 'mail to colleagues',
        decision: 'auto_approve',
        action_type: 'communication',
        conditions: [{ field: 'recipient', op: 'suffix', value: '@ourcompany.com' }],
      });
      await policy(
        acct,
        'no sales purchases',
        'forbid(principal, action == Action::"purchase", resource) when { context.metadata.hasTag("team") && context.metadata.getTag("team") == "sales" };',
      );
      // A varied history: tool calls, mail, purchases, by two agents.
      const bodies: Array<{ key: string; body: Record<string, unknown> }> = [];
      const titles = ['Run: git status', 'Run: npm test', 'Run: rm -rf dist', 'Read src/a.ts'];
      for (let i = 0; i < 24; i++) {
        const key = i % 3 === 0 ? helper.api_key : acct.api_key;
        const body =
          i % 4 === 0
            ? {
                action_type: 'system',
                title: titles[i % titles.length],
                metadata: { tool_name: i % 8 === 0 ? 'Bash' : 'Read' },
              }
            : i % 4 === 1
              ? {
                  action_type: 'communication',
                  title: `Mail ${i}`,
                  recipient: i % 2 ? 'ana@ourcompany.com' : 'eve@elsewhere.com',
                }
              : {
                  action_type: 'purchase',
                  title: `Buy ${i}`,
                  amount: 5 + i,
                  metadata: { team: i % 3 ? 'ops' : 'sales' },
                };
        bodies.push({ key, body });
      }
      const before = [];
      for (const { key, body } of bodies) before.push(must(await api.agent(key).post('/actions', body)));
      const outcome = (status: string) =>
        status === 'approved' ? 'approve' : status === 'denied' ? 'deny' : 'pending';

      const drafts = [
        {
          rule: {
            decision: 'auto_approve',
            conditions: [
              { field: 'tool_name', op: 'eq', value: 'Bash' },
              { field: 'title', op: 'prefix', value: 'Run: ' },
            ],
          },
          save: (d: { rule: Record<string, unknown> }) => rule(acct, { name: 'draft rule', ...d.rule }),
        },
        {
          cedar:
            'permit(principal, action == Action::"purchase", resource) when { context has amount_cents && context.amount_cents <= 1500 };',
          save: (d: { cedar: string }) => policy(acct, 'draft policy', d.cedar),
        },
      ];
      let history = before;
      for (const draft of drafts) {
        const { save, ...body } = draft;
        const replay = must(await device.post('/rules/simulate', { ...body, days: 1 }));
        const wouldBe = new Map(replay.changed.map((c: { id: string; would_be: string }) => [c.id, c.would_be]));
        // The replay covers every request of the account.
        expect(replay.evaluated).toBe(history.length);
        await (save as (d: unknown) => Promise<unknown>)(body);
        const after = [];
        for (const { key, body: b } of bodies) after.push(must(await api.agent(key).post('/actions', b)));
        // Each request the draft saw: what the replay said, the same request now decides.
        const replayed = history.slice(-bodies.length).map((r) => wouldBe.get(r.id) ?? outcome(r.status));
        expect(after.map((r) => outcome(r.status))).toEqual(replayed);
        expect(replay.changed_total).toBeGreaterThan(0);
        for (const c of replay.changed) expect(c.was).not.toBe(c.would_be);
        // Every request of the history is one of the bodies; today's rules decide it as they did its latest create.
        const today = history.slice(-bodies.length).map((r) => outcome(r.status));
        const counts = { approve: 0, deny: 0, pending: 0 } as Record<string, number>;
        for (const [k, r] of history.entries()) counts[wouldBe.get(r.id) ?? today[k % bodies.length]!]!++;
        expect({ approve: replay.approve, deny: replay.deny, pending: replay.pending }).toEqual(counts);
        history = [...history, ...after];
      }
      // Nothing was saved by the replays themselves.
      expect(must(await device.get('/rules')).rules.map((r: { name: string }) => r.name)).toEqual([
        'deny deletes',
        'mail to colleagues',
        'draft rule',
      ]);
    }, 120_000);

    it('refuses a bad draft as POST /rules or POST /policies would', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const bad = async (body: unknown) => {
        const r = await device.post('/rules/simulate', body);
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        return r.body as { code: string; detail: string };
      };
      expect(
        await bad({ rule: { decision: 'auto_approve', conditions: [{ field: 'x', op: 'eq', value: 1 }] } }),
      ).toMatchObject({
        code: 'invalid_request',
        detail: expect.stringMatching(/^rule\.conditions\[0\]\.field: /),
      });
      expect((await bad({ cedar: 'permit(principal, action, resource' })).code).toBe('invalid_policy');
      expect((await bad({})).detail).toMatch(/^rule: give exactly one of rule and cedar/);
      expect((await bad({ rule: { decision: 'auto_deny' }, cedar: 'x' })).detail).toMatch(/^rule: /);
      expect((await bad({ rule: { decision: 'auto_deny' }, days: 91 })).detail).toMatch(/^days: must be 1 to 90/);
    });

    it('suggests the rules a seeded history implies, with evidence and replay; adopting one settles those requests', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      must(await device.post('/agents', { name: 'unused' }));
      const ask2 = (body: Record<string, unknown>) => ask(acct, body);
      const decide = async (body: Record<string, unknown>, how: 'approve' | 'deny') => {
        const created = await ask2(body);
        must(await device.post(`/actions/${created.id}/${how}`, how === 'deny' ? { reason: 'no' } : undefined));
      };
      for (let i = 0; i < 7; i++)
        await decide(
          { action_type: 'data_access', title: `Read file ${i}`, metadata: { tool_name: 'Read' } },
          'approve',
        );
      for (let i = 0; i < 4; i++)
        await decide({ action_type: 'system', title: `Run ${i}`, metadata: { tool_name: 'Bash' } }, 'approve');
      await decide({ action_type: 'system', title: 'Run rm', metadata: { tool_name: 'Bash' } }, 'deny');
      for (let i = 0; i < 5; i++)
        await decide({ action_type: 'purchase', title: `Buy ${i}`, amount: 3, recipient: 'Shady Goods Ltd' }, 'deny');
      await ask2({ action_type: 'data_access', title: 'Read file pending', metadata: { tool_name: 'Read' } });

      const { suggestions } = must(await device.get('/rules/suggestions'));
      expect(suggestions.map((s: { summary: string }) => s.summary)).toEqual([
        `7 of 7 Read calls of ${'default agent'} approved by a person in 30 days`.replace(
          'default agent',
          suggestions[0].evidence.agent_name ?? acct.agent_id,
        ),
        expect.stringMatching(/^5 of 5 purchase requests of .* to Shady Goods Ltd denied by a person in 30 days$/),
      ]);
      const [read, shady] = suggestions;
      expect(read.rule).toMatchObject({
        decision: 'auto_approve',
        action_type: 'data_access',
        agent_id: acct.agent_id,
        conditions: [{ field: 'tool_name', op: 'eq', value: 'Read' }],
      });
      expect(read.evidence).toMatchObject({ decided: 7, approved: 7, denied: 0, tool_name: 'Read', days: 30 });
      // Its replay: the 7 approved and the one still pending would have been approved at once.
      expect(read.replay).toMatchObject({ evaluated: 18, approve: 8, changed_total: 8 });
      expect(shady.rule).toMatchObject({
        decision: 'auto_deny',
        conditions: [{ field: 'recipient', op: 'eq', value: 'Shady Goods Ltd' }],
      });
      expect(shady.replay).toMatchObject({ deny: 5, changed_total: 5 });

      // One tap: POST /rules takes the suggestion as it is.
      must(await device.post('/rules', read.rule));
      expect(
        await ask2({ action_type: 'data_access', title: 'Read another', metadata: { tool_name: 'Read' } }),
      ).toMatchObject({
        status: 'approved',
        rule_applied: read.rule.name,
      });
      const again = must(await device.get('/rules/suggestions')).suggestions;
      expect(again.map((s: { rule: { name: string } }) => s.rule.name)).toEqual([shady.rule.name]);
    }, 120_000);

    it.skipIf(mode !== 'processes')(
      'never spends past a limit with conditional rules and Cedar permits in force: 40 simultaneous $10 purchases against $100 a day on two policy replicas',
      async () => {
        if (stack.processes('policy').length < 2) await stack.addProcess('policy');
        for (const approving of ['conditional rule', 'cedar permit'] as const) {
          const acct = await api.newAccount();
          if (approving === 'conditional rule')
            await rule(acct, {
              name: 'ops purchases',
              decision: 'auto_approve',
              action_type: 'purchase',
              conditions: [
                { field: 'metadata.team', op: 'eq', value: 'ops' },
                { field: 'amount', op: 'lte', value: 50 },
                { field: 'title', op: 'prefix', value: 'burst' },
              ],
            });
          else
            await policy(
              acct,
              'ops purchases',
              'permit(principal, action == Action::"purchase", resource) when { context.metadata.hasTag("team") && context.metadata.getTag("team") == "ops" };',
            );
          const daily = must(
            await api.device(acct.device_id).post('/spending-limits', { period: 'daily', amount_limit: 100 }),
          );
          const keys = [acct.api_key];
          for (const i of [1, 2, 3])
            keys.push(must(await api.device(acct.device_id).post('/agents', { name: `bot ${i}` })).api_key);
          await Promise.all(keys.map((k) => api.agent(k).get('/actions')));
          const results = await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              api.agent(keys[i % keys.length]!).post('/actions', {
                action_type: 'purchase',
                title: `burst ${i}`,
                amount: 10,
                metadata: { team: 'ops' },
              }),
            ),
          );
          expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
          const approved = results.filter((r) => r.body.status === 'approved');
          expect(approved, approving).toHaveLength(10);
          expect(results.filter((r) => r.body.status === 'denied')).toHaveLength(30);
          for (const r of approved) expect(r.body.rule_applied).toBe('ops purchases');
          const [spend] =
            await db.sql`select count(*)::int as n, sum(amount_cents)::int as cents from policy.spend where account_id = ${acct.account_id}`;
          expect(spend).toEqual({ n: 10, cents: 10_000 });
          const [usage] =
            await db.sql`select spent_cents::int as cents from policy.limit_usage where limit_id = ${daily.limit_id}`;
          expect(usage!.cents).toBe(10_000);
        }
      },
    );
  });
}
