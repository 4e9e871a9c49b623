// Action creation on an account with 20 live standing grants against one with none. The grants are the
// agent's, for purchases, each to another recipient, so none covers the bench request: what is measured is the cost
// of an account having grants (the replica's copy lists them; no round trip unless one covers the request). A third
// run has a grant that covers every request, so each is approved by it (its use counted under the account's lock).
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack } from '../harness/stack.js';
import { withDatabase, type BenchCase } from './load.js';
import { accountsInTurns, printTurns } from './account-turns.js';

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

/** Approves a new pending request of the account with a grant (the request's recipient scopes the grant). */
async function grantFor(api: ApiClient, account: Account, recipient: string | null): Promise<void> {
  const created = await api
    .agent(account.api_key)
    .post('/actions', { action_type: 'purchase', title: 'grant set-up', amount: 1, recipient });
  if (created.status !== 200 || created.body.status !== 'pending')
    throw new Error(`grant set-up failed: ${created.status} ${JSON.stringify(created.body)}`);
  const approved = await api
    .device(account.device_id)
    .post(`/actions/${created.body.id}/approve`, { grant: { duration_seconds: 86_400 } });
  if (approved.status !== 200)
    throw new Error(`grant set-up failed: ${approved.status} ${JSON.stringify(approved.body)}`);
}

export const grantsBench: BenchCase = {
  name: 'grants',
  description: 'POST /actions (all-in-one): no grants vs 20 live grants (none covering) vs one covering',
  async run(infra) {
    const rows = await withDatabase(infra, async (databaseUrl) => {
      const stack = await startStack({
        mode: 'all-in-one',
        databaseUrl,
        natsUrl: infra.natsUrl,
        name: 'bench-grants',
        env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
      });
      try {
        const api = apiClient(stack.baseUrl);
        const unlimited = async () => {
          const account = await api.newAccount();
          await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
          return account;
        };
        const none = await unlimited();
        const granted = await unlimited();
        for (let i = 0; i < 20; i++) await grantFor(api, granted, `shop ${i}`);
        const covered = await unlimited();
        for (let i = 0; i < 19; i++) await grantFor(api, covered, `shop ${i}`);
        await grantFor(api, covered, null); // the bench request has no recipient: this grant covers it
        // The three take turns: one after the other, the same case swung by up to 15 % on this machine.
        return await accountsInTurns(stack, databaseUrl, [
          ['(a) no grants (stays pending)', none],
          ['(b) 20 live grants, none covering (pending)', granted],
          ['(c) 20 live grants, one approves each', covered],
        ]);
      } finally {
        await stack.stop();
      }
    });
    printTurns(rows, ' (goal >= 0.9)');
  },
};
