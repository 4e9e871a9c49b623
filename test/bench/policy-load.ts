// Action creation with an account's policy in force (50 rules, 5 spending limits) against an account with none.
// Rules are checked in order and limits read the period's spend, so this is the cost of policy per request.
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack } from '../harness/stack.js';
import { withDatabase, type BenchCase } from './load.js';
import { accountsInTurns, printTurns } from './account-turns.js';

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

function must(reply: { status: number; body: unknown }): void {
  if (reply.status !== 200) throw new Error(`policy set-up failed: ${reply.status} ${JSON.stringify(reply.body)}`);
}

/** 50 rules that all miss a $9.99 low-risk purchase (so every one is checked), then 5 limits that all cover it. */
export async function heavyPolicy(api: ApiClient, account: Account, lastRule: 'miss' | 'auto_approve'): Promise<void> {
  const device = api.device(account.device_id);
  for (let i = 0; i < 49; i++) {
    const rule =
      i % 2 === 0
        ? { name: `legal ${i}`, action_type: 'legal', decision: 'auto_deny' }
        : { name: `small ${i}`, action_type: 'purchase', amount_max_cents: 100 + i, decision: 'auto_approve' };
    await device.post('/rules', rule).then(must);
  }
  const last =
    lastRule === 'miss'
      ? { name: 'other agent', agent_id: 'agt_00000000000000000000000000', decision: 'auto_approve' }
      : { name: 'approve purchases', action_type: 'purchase', decision: 'auto_approve' };
  await device.post('/rules', last).then(must);
  const limits = [
    { period: 'daily', amount_limit: 10_000_000 },
    { period: 'weekly', amount_limit: 20_000_000 },
    { period: 'monthly', amount_limit: 50_000_000 },
    { period: 'daily', amount_limit: 10_000_000, action_type: 'purchase' },
    { period: 'monthly', amount_limit: 50_000_000, agent_id: account.agent_id },
  ];
  for (const limit of limits) await device.post('/spending-limits', limit).then(must);
}

export const policyLoad: BenchCase = {
  name: 'policy',
  description: 'POST /actions (all-in-one): no policy vs 50 rules + 5 limits',
  async run(infra) {
    const rows = await withDatabase(infra, async (databaseUrl) => {
      const stack = await startStack({
        mode: 'all-in-one',
        databaseUrl,
        natsUrl: infra.natsUrl,
        name: 'bench-policy',
        env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
      }); // one key at full speed would pass any limit; the admission case measures the limit
      try {
        const api = apiClient(stack.baseUrl);
        const unlimited = async () => {
          const account = await api.newAccount();
          await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
          return account;
        };
        const none = await unlimited();
        const heavy = await unlimited();
        await heavyPolicy(api, heavy, 'miss');
        const approving = await unlimited();
        await heavyPolicy(api, approving, 'auto_approve');
        // The three take turns: one after the other, the same case swung by up to 15 % on this machine.
        return await accountsInTurns(stack, databaseUrl, [
          ['(a) no rules, no limits (stays pending)', none],
          ['(b) 50 rules + 5 limits, none match (pending)', heavy],
          ['(c) 50 rules + 5 limits, rule 50 approves', approving],
        ]);
      } finally {
        await stack.stop();
      }
    });
    printTurns(rows, '');
  },
};
