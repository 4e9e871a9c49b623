import { describe, expect, it } from 'vitest';
import { parseRoute } from './public/format.js';
import { connectRequestFromHash, linkedFirst, requestIdFromHash } from './public/links.js';

describe('device app links', () => {
  it('reads the request id of #/requests/{id} and nothing else', () => {
    expect(requestIdFromHash('#/requests/act_abc123')).toBe('act_abc123');
    for (const hash of ['', '#', '#/requests/', '#/requests/act_1/x', '#/rules', '#/requests/<script>'])
      expect(requestIdFromHash(hash)).toBeNull();
  });

  it('reads the authorization request of #/connect?request={id}, where /oauth/authorize sends the holder', () => {
    expect(connectRequestFromHash('#/connect?request=oar_Ab12')).toBe('oar_Ab12');
    expect(parseRoute('#/connect?request=oar_Ab12')).toEqual({ view: 'connect', id: 'oar_Ab12' });
    for (const hash of ['#/connect', '#/connect?request=', '#/connect?request=a&b=1', '#/connect?request=<x>'])
      expect(connectRequestFromHash(hash)).toBeNull();
    expect(parseRoute('#/connect').view).toBe('pending');
  });

  it('puts the linked request first and says when it is no longer waiting', () => {
    const list = [{ id: 'act_1' }, { id: 'act_2' }, { id: 'act_3' }];
    expect(linkedFirst(list, 'act_3')).toEqual({
      requests: [{ id: 'act_3' }, { id: 'act_1' }, { id: 'act_2' }],
      found: true,
    });
    expect(linkedFirst(list, 'act_9')).toEqual({ requests: list, found: false });
    expect(linkedFirst(list, null)).toEqual({ requests: list, found: false });
  });
});
