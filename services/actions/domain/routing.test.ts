import { describe, expect, it } from 'vitest';
import { mayAnswer, namesOf, routingColumns } from './routing.js';

const dana = { member_id: 'mem_dana', role: 'approver' as const };
const owner = { member_id: 'mem_owner', role: 'owner' as const };

describe('who may see and answer a request', () => {
  it('is every member who may approve when its rules named no approvers', () => {
    expect(mayAnswer({ approvers: null, escalate_to: null, escalated_at: null }, dana)).toBe(true);
  });

  it('is its approvers, by member id or by role', () => {
    const byId = { approvers: ['mem_dana'], escalate_to: null, escalated_at: null };
    expect(mayAnswer(byId, dana)).toBe(true);
    expect(mayAnswer(byId, owner)).toBe(false);
    const byRole = { approvers: ['role:owner'], escalate_to: null, escalated_at: null };
    expect(mayAnswer(byRole, owner)).toBe(true);
    expect(mayAnswer(byRole, dana)).toBe(false);
  });

  it('takes in the people it escalates to only once it escalated', () => {
    const waiting = { approvers: ['mem_dana'], escalate_to: ['role:owner'], escalated_at: null };
    expect(mayAnswer(waiting, owner)).toBe(false);
    expect(mayAnswer({ ...waiting, escalated_at: new Date() }, owner)).toBe(true);
    expect(mayAnswer({ ...waiting, escalated_at: new Date() }, dana)).toBe(true);
  });

  it('names a member by id and by role, as the list query matches them', () => {
    expect(namesOf(dana)).toEqual(['mem_dana', 'role:approver']);
  });
});

describe('the routing columns of a new request', () => {
  const at = new Date('2026-03-02T12:00:00.000Z');
  it('are empty without routing', () => {
    expect(routingColumns(undefined, at)).toEqual({ approvers: null, escalate_at: null, escalate_to: null });
  });
  it('schedule the escalation from the creation time', () => {
    const routing = { approvers: ['mem_dana'], escalate_after_seconds: 90, escalate_to: ['role:owner'] };
    expect(routingColumns(routing, at)).toEqual({
      approvers: ['mem_dana'],
      escalate_at: new Date('2026-03-02T12:01:30.000Z'),
      escalate_to: ['role:owner'],
    });
  });
});
