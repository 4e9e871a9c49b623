import { createInProcessBus } from '@agent-auth/bus';
import { describe, expect, it } from 'vitest';
import { createMcpCalls } from './mcp-calls.js';

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('the MCP calls a gateway serves', () => {
  it('stops a call when its session cancels its id, here or through another replica on the same bus', async () => {
    const bus = createInProcessBus({ timeoutMs: 1000 });
    const here = createMcpCalls(bus);
    const there = createMcpCalls(bus);
    const session = { agent_id: 'agt_1', session_id: 's1' };
    const waiting = here.track(session, [5]);
    const heard: string[] = [];
    waiting.onCancel(() => heard.push('waiting'));
    const stopListening = waiting.onCancel(() => heard.push('no longer listening'));
    stopListening();
    const otherAgent = here.track({ agent_id: 'agt_2', session_id: 's1' }, [5]);
    const otherSession = here.track({ agent_id: 'agt_1', session_id: 's2' }, [5]);
    there.cancel(session, [5]);
    await tick();
    expect(waiting.cancelled).toBe(true);
    expect(heard).toEqual(['waiting']);
    expect(otherAgent.cancelled).toBe(false);
    expect(otherSession.cancelled).toBe(false);
    const byString = here.track(session, ['5']);
    here.cancel(session, [5]);
    await tick();
    expect(byString.cancelled).toBe(false); // the id 5 is not the id "5"
    for (const t of [waiting, otherAgent, otherSession, byString]) t.done();
    expect(here.size()).toBe(0);
    here.close();
    there.close();
  });
});
