// Escalation timeliness: how late an escalation goes out after the time its rule scheduled it (created_at +
// escalate_after_seconds). Two replicas of the actions service run the scheduler over real NATS; the escalated
// member's device stream is open on the gateway. Figures: scheduled → escalated (the statement that escalates it,
// its escalated_at) and scheduled → the action.escalated event on the device stream, p50/p99/max over
// BENCH_ESCALATIONS requests (default 100). Goal: p99 within 1 s.
import { apiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { openEventStream } from '../harness/sse.js';
import { startStack } from '../harness/stack.js';
import { type BenchCase, out, withDatabase } from './load.js';
import { figures, inParallel, notificationTable } from './notification-latency.js';

const AFTER_SECONDS = 5;

async function escalationLateness(databaseUrl: string, natsUrl: string, count: number) {
  const stack = await startStack({
    mode: 'processes',
    databaseUrl,
    natsUrl,
    name: 'bench-escalation',
    env: { LOG_REQUESTS: 'false', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
  });
  try {
    await stack.addProcess('actions');
    const api = apiClient(stack.baseUrl);
    const acct = await api.newAccount();
    const dana = await inviteAndJoin(api, acct.device_id, { name: 'Dana', role: 'approver' });
    const ada = await inviteAndJoin(api, acct.device_id, { name: 'Ada', role: 'admin' });
    const rule = await api.device(acct.device_id).post('/rules', {
      name: 'to Dana, then Ada',
      decision: 'ask',
      approvers: [dana.member_id],
      escalate_after_seconds: AFTER_SECONDS,
      escalate_to: [ada.member_id],
    });
    if (rule.status !== 200) throw new Error(`rule: ${rule.status} ${JSON.stringify(rule.body)}`);
    const stream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': ada.device_id });
    const agent = api.agent(acct.api_key);
    const ids: string[] = [];
    // Created two at a time with a pause between, so that their escalations come due spread over a few seconds.
    await inParallel(count, 2, async (i) => {
      const r = await agent.post('/actions', { action_type: 'purchase', title: `Bench ${i}`, amount: 3 });
      if (r.status !== 200 || r.body.status !== 'pending') throw new Error(`create: ${r.status}`);
      ids.push(r.body.id);
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const committed: number[] = [];
    const streamed: number[] = [];
    const deadline = Date.now() + (AFTER_SECONDS + 30) * 1000;
    for (const id of ids) {
      const event = await Promise.race([
        stream.next((e) => e.event === 'action.escalated' && e.data.action.id === id),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no escalation of ${id}`)), Math.max(0, deadline - Date.now())).unref(),
        ),
      ]);
      const scheduled = Date.parse(event.data.escalation.escalate_at);
      committed.push(Date.parse(event.data.escalation.escalated_at) - scheduled);
      streamed.push(performance.timeOrigin + event.at - scheduled);
    }
    stream.close();
    const escalatedTwice = stream.events.filter((e) => e.event === 'action.escalated').length - ids.length;
    out(
      `${ids.length} requests escalated ${AFTER_SECONDS} s after creation; escalated more than once: ${escalatedTwice}`,
    );
    return [
      figures('two actions replicas: scheduled → escalated (committed)', committed),
      figures('two actions replicas: scheduled → device stream event', streamed),
    ];
  } finally {
    await stack.stop();
  }
}

/** How late escalations go out after their scheduled time (p99 goal: 1 s). */
export const escalationBench: BenchCase = {
  name: 'escalation',
  description: 'escalation timeliness: scheduled time → escalated and → the device stream event, p50/p99/max',
  async run(infra) {
    if (!infra.natsUrl) {
      out('skipped: needs NATS (two replicas of the actions service)');
      return;
    }
    const count = Number(process.env.BENCH_ESCALATIONS ?? 100);
    const rows = await withDatabase(infra, (url) => escalationLateness(url, infra.natsUrl!, count));
    notificationTable(rows, out);
  },
};
