import { describe, expect, it } from 'vitest';
import type { ActionEvent } from '@agent-auth/contracts';
import { pushedMembers } from './notify-devices.js';

const event = (extra: Partial<ActionEvent>): ActionEvent =>
  ({ id: 'msg_1', type: 'action.created', account_id: 'acc_1', agent_id: 'agt_1', ...extra }) as ActionEvent;

describe('whose devices hear of an event', () => {
  it('an escalation: the members it went to', () => {
    const escalation = {
      escalate_at: '2026-01-01T00:00:05.000Z',
      escalated_at: '2026-01-01T00:00:05.010Z',
      escalate_to: ['role:admin'],
      members: [{ member_id: 'mem_ada', name: 'Ada', email: null }],
    };
    expect(pushedMembers(event({ type: 'action.escalated', escalation }))).toEqual(['mem_ada']);
  });

  it('a routed creation: its approvers as the rule named them (ids and roles); not routed, the whole account', () => {
    expect(pushedMembers(event({ approvers: ['mem_dana', 'mem_lee'] }))).toEqual(['mem_dana', 'mem_lee']);
    expect(pushedMembers(event({ approvers: ['mem_dana', 'role:admin'] }))).toEqual(['mem_dana', 'role:admin']);
    expect(pushedMembers(event({}))).toBeNull();
  });
});
