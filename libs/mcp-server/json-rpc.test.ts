import { describe, expect, it } from 'vitest';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { cancelledIdsOf, isPlainToolCall, needsStream, requestIdsOf } from './json-rpc.js';

const call = (id: number | string, name: string, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {}, ...(meta ? { _meta: meta } : {}) },
});
const cancelled = (requestId: unknown) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'gone' },
});

describe('the JSON-RPC messages of a POST', () => {
  it('names the ids of its requests, in a message or a batch, and none of its notifications', () => {
    expect(requestIdsOf(call(1, 'check_approval'))).toEqual([1]);
    expect(requestIdsOf([call('a', 'check_approval'), cancelled(3), call(2, 'x')])).toEqual(['a', 2]);
    expect(requestIdsOf(cancelled(3))).toEqual([]);
    expect(requestIdsOf('not a message')).toEqual([]);
  });

  it('names the calls that notifications/cancelled give up, ignoring malformed ones', () => {
    expect(cancelledIdsOf(cancelled(7))).toEqual([7]);
    expect(cancelledIdsOf([cancelled('w-1'), cancelled({ nested: true }), call(1, 'x')])).toEqual(['w-1']);
    expect(cancelledIdsOf({ jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 1 } })).toEqual([]);
  });

  it('streams the answer of a call that waits or asks for progress, and answers other calls with one JSON body', () => {
    expect(needsStream(call(1, 'wait_for_approval'))).toBe(true);
    expect(needsStream(call(1, 'execute_api_call'))).toBe(true);
    expect(needsStream(call(1, 'check_approval', { progressToken: 'p' }))).toBe(true);
    expect(needsStream(call(1, 'request_approval'))).toBe(false);
    expect(needsStream({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(false);
    expect(needsStream([cancelled(1)])).toBe(false);
  });

  it("takes as a plain tool call only what the SDK's own guard takes as a request, and nothing with _meta", () => {
    const plain = [
      call(1, 'request_approval'),
      call('a-1', 'check_approval'),
      { jsonrpc: '2.0', id: 0, method: 'tools/call' },
    ];
    for (const body of plain) {
      expect(isPlainToolCall(body)).toBe(true);
      expect(isJSONRPCRequest(body)).toBe(true);
    }
    const refused = [
      [call(1, 'x')],
      { ...call(1, 'x'), extra: true },
      { ...call(1.5, 'x') },
      { ...call(1, 'x'), id: null },
      { ...call(1, 'x'), jsonrpc: '1.0' },
      { ...call(1, 'x'), method: 'tools/list' },
      { ...call(1, 'x'), params: 'a' },
      { ...call(1, 'x'), params: [1] },
      call(1, 'x', { progressToken: 'p' }),
      call(1, 'x', {}),
      null,
      'tools/call',
    ];
    for (const body of refused) expect(isPlainToolCall(body)).toBe(false);
  });
});
