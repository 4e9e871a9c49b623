import { describe, expect, it } from 'vitest';
import { DecideRequest, toolCallFactsOf } from './policy.js';
import { newActionOfHook } from './tool-calls.js';

describe('tool call facts of a request', () => {
  it("are a hook request's tool, session and shell command", () => {
    const action = newActionOfHook(
      'claude-code',
      {
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm test', description: 'Run the tests' },
        session_id: 'sess-1',
        cwd: '/home/dev/demo',
      } as Parameters<typeof newActionOfHook>[1],
      60,
    );
    expect(toolCallFactsOf(action.metadata)).toEqual({ tool_name: 'Bash', session_id: 'sess-1', command: 'npm test' });
  });

  it("read Codex's argv command as the script its shell runs", () => {
    const metadata = { tool_name: 'shell', session_id: 'cx', tool_input: { command: ['bash', '-lc', 'cargo test'] } };
    expect(toolCallFactsOf(metadata)?.command).toBe('cargo test');
  });

  it('have no session or command where the call has none (an MCP gate request)', () => {
    const metadata = { source: 'mcp', server: 'files', tool_name: 'read_file', arguments: { path: '/x' } };
    expect(toolCallFactsOf(metadata)).toEqual({ tool_name: 'read_file', session_id: null, command: null });
    expect(toolCallFactsOf({ tool_name: 'Bash', session_id: '', tool_input: 'npm test' })).toEqual({
      tool_name: 'Bash',
      session_id: null,
      command: null,
    });
  });

  it('are null for a request that is no tool call', () => {
    expect(toolCallFactsOf(undefined)).toBeNull();
    expect(toolCallFactsOf(null)).toBeNull();
    expect(toolCallFactsOf({ order: 'A-1' })).toBeNull();
    expect(toolCallFactsOf({ tool_name: 42, tool_input: { command: 'npm test' } })).toBeNull();
  });

  it('travel in the decide question, which still takes a question without them', () => {
    const question = {
      action_id: 'act_1',
      account_id: 'acc_1',
      agent_id: 'agt_1',
      action_type: 'system',
      risk_level: 'medium',
      amount_cents: null,
      currency: 'USD',
    };
    expect(DecideRequest.parse(question)).toEqual(question);
    const call = { tool_name: 'Bash', session_id: 's', command: 'npm test' };
    expect(DecideRequest.parse({ ...question, ...call })).toEqual({ ...question, ...call });
  });
});
