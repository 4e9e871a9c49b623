// What the policy language costs: creates with 50 conditional rules and 20 Cedar policies in force (none matching,
// so every one is evaluated and the request stays pending) against an account with no policy, and against 50 plain
// rules; Cedar's decision time per request in this process; and a replay over 100,000 stored requests (its time
// and the memory the process grew by while it ran).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { timePrefix } from '@agent-auth/contracts';
import { generateKeyringSpec, parseKeyring } from '@agent-auth/encryption';
import {
  automaticMatch,
  cedarVerdict,
  cedarVerdictUncached,
  inScope,
  momentOf,
  preparePolicies,
  type RequestFacts,
} from '@agent-auth/policy-language';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { out, withDatabase, type BenchCase } from './load.js';
import { accountsInTurns, printTurns } from './account-turns.js';
import { PURCHASE } from './action-creation.js';
import { heavyPolicy } from './policy-load.js';

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

/** Stored requests the replay reads (BENCH_REPLAY_REQUESTS). */
const REPLAY_REQUESTS = Number(process.env.BENCH_REPLAY_REQUESTS ?? 100_000);

function must(reply: { status: number; body: unknown }): void {
  if (reply.status !== 200) throw new Error(`set-up failed: ${reply.status} ${JSON.stringify(reply.body)}`);
}

/** 50 rules with conditions, each on the bench purchase's fields, none of which holds for it. */
export function conditionalRules(): Array<Record<string, unknown>> {
  return Array.from({ length: 50 }, (_, i) => {
    const decision = i % 2 ? 'auto_deny' : 'auto_approve';
    const name = `conditional ${i}`;
    switch (i % 5) {
      case 0:
        return {
          name,
          decision,
          action_type: 'purchase',
          conditions: [{ field: 'recipient', op: 'suffix', value: `@vendor${i}.com` }],
        };
      case 1:
        return { name, decision, conditions: [{ field: 'title', op: 'glob', value: `Invoice * #${i}` }] };
      case 2:
        return {
          name,
          decision,
          action_type: 'purchase',
          conditions: [
            { field: 'amount', op: 'lt', value: 5 },
            { field: 'metadata.order', op: 'eq', value: `po-${i}` },
          ],
        };
      case 3:
        return { name, decision, conditions: [{ field: 'tool_name', op: 'in', value: [`Read${i}`, 'Grep', 'Glob'] }] };
      default:
        return {
          name,
          decision,
          conditions: [
            { field: 'metadata.order', op: 'prefix', value: `blocked-${i}` },
            { field: 'risk_level', op: 'gte', value: 'high' },
            { field: 'weekday', op: 'in', value: ['sat', 'sun'] },
          ],
        };
    }
  });
}

/** 20 Cedar policies, permits and forbids, none of which matches the bench purchase. */
export function cedarPolicies(): Array<{ name: string; cedar: string }> {
  return Array.from({ length: 20 }, (_, i) => {
    const name = `cedar ${i}`;
    switch (i % 4) {
      case 0:
        return {
          name,
          cedar: `permit(principal, action == Action::"system", resource) when { context has tool_name && context.tool_name == "Read${i}" };`,
        };
      case 1:
        return {
          name,
          cedar: `forbid(principal, action == Action::"purchase", resource) when { context.metadata.hasTag("order") && context.metadata.getTag("order") == "blocked-${i}" };`,
        };
      case 2:
        return {
          name,
          cedar: `forbid(principal, action, resource) when { context has recipient && context.recipient like "*@evil${i}.example" };`,
        };
      default:
        return {
          name,
          cedar: `permit(principal, action == Action::"purchase", resource) when { context has amount_cents && context.amount_cents > ${100_000 + i} && context.risk_level == "low" };`,
        };
    }
  });
}

async function sayItAll(api: ApiClient, account: Account): Promise<void> {
  const device = api.device(account.device_id);
  for (const rule of conditionalRules()) must(await device.post('/rules', rule));
  for (const policy of cedarPolicies()) must(await device.post('/policies', policy));
}

/** Percentiles of a sample, in microseconds. */
function micros(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000).toFixed(1);
  return `p50 ${at(0.5)} µs, p90 ${at(0.9)} µs, p99 ${at(0.99)} µs`;
}

/** Cedar's decision per request in this process: the 20 policies above, the bench purchase as the policy asks it. */
function cedarInProcess(): void {
  const prepared = preparePolicies(cedarPolicies().map((p, i) => ({ id: `pol_${i}`, ...p })))!;
  const facts: RequestFacts = {
    action_type: 'purchase',
    agent_id: 'agt_bench',
    risk_level: 'medium',
    amount_cents: 999,
    currency: 'USD',
    title: PURCHASE.title,
    reversible: true,
    metadata: PURCHASE.metadata,
  };
  const rules = conditionalRules().map((r) => ({
    action_type: null,
    agent_id: null,
    risk_level_max: null,
    amount_max_cents: null,
    ...r,
  })) as Parameters<typeof automaticMatch>[0]['rules'];
  // Wall time and this thread's CPU time of each call: on a shared machine the wall time's tail is mostly other
  // processes' turns, the CPU time's is the call's own.
  const time = (f: (i: number) => unknown) => {
    for (let i = 0; i < 2000; i++) f(i);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      f(i);
      wall.push(performance.now() - started);
      const used = process.cpuUsage(cpuStart);
      cpu.push((used.user + used.system) / 1000);
    }
    return `wall ${micros(wall)}; cpu ${micros(cpu)}`;
  };
  const moment = () => momentOf(new Date(), 'Europe/Paris');
  const asked = prepared.policies.filter((_, i) =>
    inScope(prepared.scopes[i]!, facts.agent_id, facts.action_type),
  ).length;
  out(`Cedar asked (${asked} of the 20 policies in the purchase's scope, none matching), no answer kept:`);
  out(`  ${time((i) => cedarVerdictUncached(prepared, facts, `act_${i}`, moment()))}`);
  out('Cedar as a decision asks it (answers kept by request):');
  out(`  ${time((i) => cedarVerdict(prepared, facts, `act_${i}`, moment()))}`);
  out('the whole automatic decision (50 conditional rules, then Cedar as a decision asks it):');
  out(`  ${time((i) => automaticMatch({ rules, cedar: prepared }, facts, `act_${i}`, moment()))}`);
}

/** The resident memory of a process, in MB. */
function rssMb(pid: number): number {
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!rss) throw new Error(`process ${pid} is gone (see its log in .test-logs)`);
  return Number(rss[1]) / 1024;
}

/**
 * Stores `n` requests of the account over the last 29 days, as creates would have: tool calls, mail, purchases by
 * its agents, decided or not, the metadata sealed with the actions keyring under each request's id.
 */
export async function storeHistory(
  databaseUrl: string,
  keyringSpec: string,
  account: Account,
  agents: string[],
  n: number,
) {
  const keyring = parseKeyring(keyringSpec);
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const tools = ['Read', 'Bash', 'Grep', 'Edit', 'WebFetch'];
  const statuses = ['approved', 'approved', 'denied', 'expired', 'approved'];
  const methods = ['biometric', 'user', 'totp'];
  const now = Date.now();
  try {
    for (let start = 0; start < n; start += 2000) {
      const rows = [];
      for (let g = start; g < Math.min(n, start + 2000); g++) {
        const at = now - 3_600_000 - Math.floor(((n - g) / n) * 28 * 86_400_000);
        const id = `act_${timePrefix(at)}${randomBytes(8).toString('base64url').slice(0, 11)}`;
        const kind = g % 10;
        const tool = tools[g % tools.length]!;
        const metadata =
          kind < 4
            ? { source: 'claude-code', tool_name: tool, session_id: `sess-${g % 500}`, cwd: '/home/dev/project' }
            : kind < 7
              ? { thread: `t-${g % 300}` }
              : { order: `po-${g % 2000}`, cost_center: `cc-${g % 12}` };
        const status = statuses[g % statuses.length]!;
        rows.push({
          id,
          account_id: account.account_id,
          agent_id: agents[g % agents.length]!,
          action_type: kind < 4 ? 'system' : kind < 7 ? 'communication' : 'purchase',
          title: kind < 4 ? `Run: ${tool.toLowerCase()} step ${g % 40}` : kind < 7 ? `Mail ${g}` : `Buy ${g}`,
          risk_level: ['low', 'medium', 'high'][g % 3]!,
          risk_rank: g % 3,
          reversible: g % 4 !== 0,
          amount_cents: kind >= 7 ? 100 + (g % 5000) : null,
          currency: 'USD',
          recipient: kind >= 4 && kind < 7 ? `person${g % 200}@${g % 3 ? 'ourcompany.com' : 'elsewhere.com'}` : null,
          metadata_enc: keyring.encrypt(JSON.stringify(metadata), `request:${id}:metadata`),
          status,
          resolved_by: status === 'expired' ? 'system' : methods[g % methods.length]!,
          resolved_at: new Date(at + 60_000),
          created_at: new Date(at),
          expires_at: new Date(at + 300_000),
        });
      }
      await sql`insert into actions.requests ${sql(rows)}`;
    }
    await sql`analyze actions.requests`;
  } finally {
    await sql.end();
  }
}

/** Replays a draft over the account's history: its time over HTTP, and how far the process's memory grew. */
async function replayOnce(stack: Stack, api: ApiClient, account: Account, label: string): Promise<void> {
  const pid = stack.processes('all-in-one')[0]!.pid!;
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 5);
  const started = performance.now();
  const reply = await api.device(account.device_id).post('/rules/simulate', {
    rule: {
      decision: 'auto_approve',
      action_type: 'system',
      conditions: [{ field: 'tool_name', op: 'in', value: ['Read', 'Grep'] }],
    },
    days: 30,
  });
  const ms = performance.now() - started;
  clearInterval(sampler);
  must(reply);
  const { evaluated, approve, deny, pending, changed_total } = reply.body as Record<string, number>;
  out(
    `replay ${label}: ${evaluated} requests in ${ms.toFixed(0)} ms (approve ${approve}, deny ${deny}, pending ${pending}, changed ${changed_total}); process memory ${before.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)} MB)`,
  );
}

export const policyLanguageBench: BenchCase = {
  name: 'policy-language',
  description:
    'POST /actions (all-in-one): no policy vs 50 plain rules vs 50 conditional rules + 20 Cedar policies; Cedar per request; replay over stored requests',
  async run(infra) {
    cedarInProcess();
    await withDatabase(infra, async (databaseUrl) => {
      const keyringSpec = generateKeyringSpec('bench');
      const stack = await startStack({
        mode: 'all-in-one',
        databaseUrl,
        natsUrl: infra.natsUrl,
        name: 'bench-policy-language',
        env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false', ACTIONS_KEYS: keyringSpec },
      });
      try {
        const api = apiClient(stack.baseUrl);
        const unlimited = async () => {
          const account = await api.newAccount();
          await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
          return account;
        };
        const none = await unlimited();
        const plain = await unlimited();
        await heavyPolicy(api, plain, 'miss');
        const said = await unlimited();
        await sayItAll(api, said);
        const rows = await accountsInTurns(stack, databaseUrl, [
          ['(a) no policy (stays pending)', none],
          ['(b) 50 conditional rules + 20 Cedar, none match', said],
          ['(c) 50 plain rules + 5 limits, none match', plain],
        ]);
        printTurns(rows, ' (goal >= 0.9)');

        // Two accounts with the same history: one with the policy above in force, one with none (the draft alone).
        const heavy = await unlimited();
        await sayItAll(api, heavy);
        const plainHistory = await unlimited();
        for (const account of [heavy, plainHistory]) {
          const agents = [account.agent_id];
          for (const name of ['claude code', 'codex', 'buyer']) {
            const agent = await api.device(account.device_id).post('/agents', { name });
            must(agent);
            agents.push((agent.body as { agent_id: string }).agent_id);
          }
          const seeding = performance.now();
          await storeHistory(databaseUrl, keyringSpec, account, agents, REPLAY_REQUESTS);
          out(`${REPLAY_REQUESTS} requests stored in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
        }
        await replayOnce(stack, api, heavy, 'with 50 conditional rules + 20 Cedar in force, a tool_name draft');
        await replayOnce(stack, api, heavy, 'the same again');
        await replayOnce(stack, api, plainHistory, 'with no rule or policy in force, the same draft');
        await replayOnce(stack, api, plainHistory, 'the same again');
      } finally {
        await stack.stop();
      }
    });
  },
};
