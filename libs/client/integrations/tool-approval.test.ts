import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import type { Action } from '../types.js';
import { resumeCommand, resumeValueOf } from './langgraph.js';
import { toolCallOfInterruption } from './openai-agents.js';
import { parseToolArguments, rejectionMessage, toolCallRequest, toolCallTitle } from './tool-approval.js';

describe('toolCallTitle', () => {
  it('names the tool and each argument with its JSON value', () => {
    expect(toolCallTitle({ toolName: 'send_email', args: { to: 'ann@example.com', cc: ['bo'], urgent: true } })).toBe(
      'send_email(to: "ann@example.com", cc: ["bo"], urgent: true)',
    );
    expect(toolCallTitle({ toolName: 'ping', args: {} })).toBe('ping()');
    expect(toolCallTitle({ toolName: 'shell', args: 'ls -la' })).toBe('shell("ls -la")');
    expect(toolCallTitle({ toolName: 'now', args: undefined })).toBe('now()');
  });

  it("cuts a long call to the service's 200 characters", () => {
    const title = toolCallTitle({ toolName: 'write_file', args: { body: 'x'.repeat(500) } });
    expect(title).toHaveLength(200);
    expect(title.endsWith('…')).toBe(true);
  });
});

describe('parseToolArguments', () => {
  it('parses JSON, keeps text that is not JSON, reads an empty call as no arguments', () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ a: 1 });
    expect(parseToolArguments('not json')).toBe('not json');
    expect(parseToolArguments('')).toEqual({});
    expect(parseToolArguments(undefined)).toEqual({});
  });
});

describe('toolCallRequest', () => {
  const call = { toolName: 'transfer', args: { amount: 5 }, callId: 'call_1', agentName: 'payer' };

  it('defaults to a system request titled after the call, with the call in the metadata', () => {
    expect(toolCallRequest(call, 'ai-sdk')).toEqual({
      action_type: 'system',
      title: 'transfer(amount: 5)',
      metadata: {
        framework: 'ai-sdk',
        tool: 'transfer',
        arguments: { amount: 5 },
        tool_call_id: 'call_1',
        agent_name: 'payer',
      },
    });
  });

  it("takes the caller's fields over the defaults and merges their metadata", () => {
    const request = toolCallRequest(call, 'ai-sdk', {
      action_type: 'purchase',
      title: 'Pay Bob 5 USD',
      amount: 5,
      metadata: { order: 'A-1' },
    });
    expect(request).toMatchObject({ action_type: 'purchase', title: 'Pay Bob 5 USD', amount: 5 });
    expect(request.metadata).toMatchObject({ tool: 'transfer', order: 'A-1' });
  });
});

describe('rejectionMessage', () => {
  it('says why a call did not run', () => {
    expect(rejectionMessage({ reason: 'too much', action: { status: 'denied' } })).toBe(
      'Denied by the approver: too much',
    );
    expect(rejectionMessage({ reason: null, action: { status: 'denied' } })).toBe('Denied by the approver.');
    expect(rejectionMessage({ reason: null, action: { status: 'expired' } })).toMatch(/expired/);
    expect(rejectionMessage({ reason: null, action: { status: 'cancelled' } })).toMatch(/withdrawn/);
  });
});

describe('OpenAI Agents: toolCallOfInterruption', () => {
  it('reads a function call: name, parsed arguments, call id, agent', () => {
    const item = {
      name: 'send_email',
      arguments: '{"to":"ann@example.com"}',
      rawItem: { type: 'function_call', callId: 'call_9' },
      agent: { name: 'mailer' },
    };
    expect(toolCallOfInterruption(item as never)).toEqual({
      toolName: 'send_email',
      args: { to: 'ann@example.com' },
      callId: 'call_9',
      agentName: 'mailer',
    });
  });

  it("reads a shell call's action as its arguments", () => {
    const item = {
      name: 'shell',
      arguments: undefined,
      rawItem: { type: 'shell_call', callId: 'sh_1', action: { commands: ['ls'] } },
      agent: { name: 'ops' },
    };
    expect(toolCallOfInterruption(item as never)).toMatchObject({ toolName: 'shell', args: { commands: ['ls'] } });
  });
});

describe('LangGraph: resume values and commands', () => {
  const action = (status: Action['status'], reason: string | null = null) => ({
    id: 'act_1',
    status,
    resolved_by: 'user',
    reason,
  });

  it('carries approval, the denial reason and a message for anything not approved', () => {
    expect(resumeValueOf(action('approved'))).toEqual({
      approved: true,
      status: 'approved',
      reason: null,
      message: null,
      request_id: 'act_1',
      resolved_by: 'user',
    });
    expect(resumeValueOf(action('denied', 'not today'))).toMatchObject({
      approved: false,
      reason: 'not today',
      message: 'Denied by the approver: not today',
    });
    // A webhook body has no reason field.
    expect(resumeValueOf({ id: 'act_2', status: 'expired', resolved_by: 'system' })).toMatchObject({
      approved: false,
      reason: null,
      message: expect.stringMatching(/expired/),
    });
  });

  it('keys resume values by interrupt id; a lone interrupt without id gets the bare value', () => {
    const resume = resumeValueOf(action('approved'));
    const keyed = resumeCommand([
      { interrupt: { id: 'a' }, resume },
      { interrupt: { id: 'b' }, resume },
    ]);
    expect(keyed).toBeInstanceOf(Command);
    expect(keyed.resume).toEqual({ a: resume, b: resume });
    expect(resumeCommand([{ interrupt: {}, resume }]).resume).toEqual(resume);
    expect(() =>
      resumeCommand([
        { interrupt: {}, resume },
        { interrupt: {}, resume },
      ]),
    ).toThrow(TypeError);
  });
});
