// Audit chain sealing with two actions replicas over NATS: both seal at once, each on its sealer thread
// (a round's write goes through only if the cursor it read is still there), while creates land on either replica.
// Every event is sealed exactly once, each account's chain is gapless and verifies, and both replicas did sealing
// work (their sealing-lag histograms, fed from the threads, counted it).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyAuditChain, type AuditEvent } from '@agent-auth/client';
import { createTestDatabase } from '../infra/database.js';
import { apiClient } from '../harness/http.js';
import { linesOf } from '../harness/log-lines.js';
import { startStack, type Stack } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const small = { action_type: 'purchase', title: 'Small purchase', amount: 5 };
const large = { action_type: 'purchase', title: 'Large purchase', amount: 50 };

/** How many events a process has sealed: the count of its sealing-lag histogram, from its own metrics port. */
async function sealedBy(output: string): Promise<number> {
  const line = linesOf(output)
    .map((l) => JSON.parse(l) as { msg?: string; metrics_port?: number })
    .find((l) => l.msg === 'metrics listening' && l.metrics_port);
  if (!line) throw new Error(`no 'metrics listening' line in:\n${output}`);
  const page = await (await fetch(`http://127.0.0.1:${line.metrics_port}/metrics`)).text();
  const count = /^agent_auth_audit_sealing_lag_seconds_count(?:\{[^}]*\})? (\d+)/m.exec(page);
  return count ? Number(count[1]) : 0;
}

describe.skipIf(!natsUrl)('audit sealing with two actions replicas (processes)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let stack: Stack;
  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl,
      name: 'sealing-replicas',
      env: { AUDIT_SEAL_INTERVAL_MS: '20' },
    });
    await stack.addProcess('actions'); // the same receipt keys, bus and database
  }, 120_000); // five processes and a second replica
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('seals every event exactly once, each account a gapless chain that verifies, both replicas sealing', async () => {
    const api = apiClient(stack.baseUrl);
    const accounts = await Promise.all(Array.from({ length: 4 }, () => api.newAccount()));
    for (const a of accounts) {
      const rule = await api.device(a.device_id).post('/rules', {
        name: 'small purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        amount_max_cents: 1000,
      });
      expect(rule.status).toBe(200);
    }
    // Waves of creates (half approved by the rule at once: two events each) while both sealers run.
    for (let wave = 0; wave < 5; wave++) {
      const created = await Promise.all(
        accounts.flatMap((a) =>
          Array.from({ length: 8 }, (_, i) => api.agent(a.api_key).post('/actions', i % 2 ? small : large)),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(created.map(() => 200));
    }
    // Without reading through the service (which seals on read), the background sealers reach every event.
    await expect
      .poll(async () => Number((await db.sql`select count(*) from actions.audit_unsealed`)[0]!.count), {
        timeout: 20_000,
      })
      .toBe(0);

    const ids = accounts.map((a) => a.account_id);
    const chains = await db.sql<
      Array<{ account_id: string; events: number; places: number; chained: number; first: number; last: number }>
    >`
      select e.account_id, count(*)::int as events, count(c.event_id)::int as places,
        count(distinct c.event_id)::int as chained, min(c.seq)::int as first, max(c.seq)::int as last
      from actions.audit_events e left join actions.audit_chain c on c.event_id = e.id
      where e.account_id = any(${ids}) group by e.account_id order by e.account_id`;
    expect(chains).toHaveLength(accounts.length);
    const total = new Map<string, number>();
    for (const chain of chains) {
      // The account's creation, then 40 requests of which 20 approved at creation (two events each), at least.
      expect(chain.events).toBeGreaterThanOrEqual(61);
      const n = chain.events;
      expect(chain).toEqual({ account_id: chain.account_id, events: n, places: n, chained: n, first: 1, last: n });
      total.set(chain.account_id, n);
    }
    const sum = [...total.values()].reduce((a, b) => a + b, 0);
    const [{ places }] = await db.sql<[{ places: number }]>`
      select count(*)::int as places from actions.audit_chain where account_id = any(${ids})`;
    expect(places).toBe(sum);

    const jwks = await (await fetch(new URL('/.well-known/jwks.json', stack.baseUrl))).json();
    for (const a of accounts) {
      const device = api.device(a.device_id);
      const events: AuditEvent[] = [];
      for (let after = 0; ; ) {
        const page = (await device.get(`/audit?after=${after}&limit=25`)).body;
        events.push(...page.events);
        if (page.next_after === null) break;
        after = page.next_after;
      }
      const n = total.get(a.account_id)!;
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(await verifyAuditChain(events, (await device.get('/audit/head')).body, jwks)).toMatchObject({
        account_id: a.account_id,
        head_seq: n,
      });
    }

    // Both replicas took part: each sealed some of the events, together all of them (each exactly once).
    const counts = await Promise.all(stack.processes('actions').map((p) => sealedBy(stack.outputOf(p))));
    expect(counts).toHaveLength(2);
    for (const count of counts) expect(count).toBeGreaterThan(0);
    expect(counts[0]! + counts[1]!).toBe(sum);
  }, 180_000);
});
