import { describe, expect, it } from 'vitest';
import { coveringGrants, grantCovers, type GrantScope } from './grant-matching.js';

const now = new Date('2026-01-01T12:00:00Z');
const grant = (over: Partial<GrantScope> = {}): GrantScope => ({
  id: 'grt_a',
  agent_id: 'agt_1',
  action_type: 'purchase',
  recipient: 'shop',
  currency: 'USD',
  expires_at: new Date('2026-01-01T13:00:00Z'),
  ...over,
});
const request = { agent_id: 'agt_1', action_type: 'purchase', recipient: 'shop', currency: 'USD' };

describe('grant scope', () => {
  it('covers a request of the same agent, action type, recipient and currency', () => {
    expect(grantCovers(grant(), request, now)).toBe(true);
  });

  it('does not cover another agent, action type, recipient or currency', () => {
    expect(grantCovers(grant(), { ...request, agent_id: 'agt_2' }, now)).toBe(false);
    expect(grantCovers(grant(), { ...request, action_type: 'communication' }, now)).toBe(false);
    expect(grantCovers(grant(), { ...request, recipient: 'other' }, now)).toBe(false);
    expect(grantCovers(grant(), { ...request, recipient: null }, now)).toBe(false);
    expect(grantCovers(grant(), { ...request, currency: 'EUR' }, now)).toBe(false);
  });

  it('made without a recipient covers only requests without one', () => {
    expect(grantCovers(grant({ recipient: null }), { ...request, recipient: undefined }, now)).toBe(true);
    expect(grantCovers(grant({ recipient: null }), request, now)).toBe(false);
  });

  it('does not cover anything once expired', () => {
    expect(grantCovers(grant({ expires_at: now }), request, now)).toBe(false);
  });

  it('lists covering grants soonest to expire first', () => {
    const late = grant({ id: 'grt_late', expires_at: new Date('2026-01-02T00:00:00Z') });
    const soon = grant({ id: 'grt_soon', expires_at: new Date('2026-01-01T12:30:00Z') });
    const other = grant({ id: 'grt_other', agent_id: 'agt_9' });
    expect(coveringGrants([late, other, soon], request, now).map((g) => g.id)).toEqual(['grt_soon', 'grt_late']);
  });
});
