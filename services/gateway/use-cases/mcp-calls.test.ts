import { createInProcessBus } from '@agent-auth/bus';
import { describe, expect, it } from 'vitest';
import { createMcpCalls } from './mcp-calls.js';

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('the MCP calls a gateway serves', () => {
  it('stops a call when its agent cancels its id, here or through another replica on the same bus', async () => {
    const bus = createInProcessBus({ timeoutMs: 1000 });
    const here = createMcpCalls(bus);
    const there = createMcpCalls(bus);
    const waiting = here.track('agt_1', [5]);
    const other = here.track('agt_2', [5]);
    there.cancel('agt_1', [5]);
    await tick();
    expect(waiting.signal.aborted).toBe(true);
    expect(other.signal.aborted).toBe(false);
    const byString = here.track('agt_1', ['5']);
    here.cancel('agt_1', [5]);
    await tick();
    expect(byString.signal.aborted).toBe(false); // the id 5 is not the id "5"
    for (const t of [waiting, other, byString]) t.done();
    expect(here.size()).toBe(0);
    here.close();
    there.close();
  });
});
