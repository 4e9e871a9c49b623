import { describe, expect, it } from 'vitest';
// The browser module itself, run in Node: the same code the device app runs.
import { parseRoute } from './public/format.js';
import {
  abilitiesOf,
  approverOf,
  homeViewOf,
  inMinutes,
  joinLink,
  ruleRoutingLine,
  viewsFor,
  waitingLine,
  whoIs,
} from './public/people.js';

const now = Date.parse('2026-11-29T08:00:00Z');
const byId = new Map([
  ['mem_dana', { member_id: 'mem_dana', name: 'Dana', role: 'approver' }],
  ['mem_sam', { member_id: 'mem_sam', name: 'Sam', role: 'owner' }],
]);

describe('the device app and the team', () => {
  it('offers each role the views the service lets it use (device-roles.ts)', () => {
    expect([...viewsFor('owner')].sort()).toEqual(
      [
        'agents',
        'connect',
        'device',
        'grants',
        'history',
        'limits',
        'pending',
        'request',
        'rules',
        'team',
        'vault',
      ].sort(),
    );
    expect(viewsFor('admin')).toEqual(viewsFor('owner'));
    expect([...viewsFor('approver')].sort()).toEqual(['device', 'pending', 'request', 'team']);
    expect([...viewsFor('auditor')].sort()).toEqual(['device', 'history', 'team']);
    expect(homeViewOf('approver')).toBe('pending');
    expect(homeViewOf('auditor')).toBe('history');
    expect(abilitiesOf('admin')).toEqual({ manage: true, answer: true, audit: true, owner: false });
    expect(abilitiesOf('auditor')).toEqual({ manage: false, answer: false, audit: true, owner: false });
  });

  it('names members and role groups, and says whom a request waits for and when it escalates', () => {
    expect(whoIs('mem_dana', byId)).toBe('Dana (approver)');
    expect(whoIs('role:admin', byId)).toBe('the admins');
    expect(whoIs('mem_gone', byId)).toBe('mem_gone');
    const item = {
      approvers: ['mem_dana'],
      escalate_to: ['mem_sam', 'role:admin'],
      escalate_at: new Date(now + 4 * 60_000 - 10_000).toISOString(),
    };
    expect(waitingLine(item, byId, now)).toBe(
      'Waiting for Dana (approver) — escalates to Sam (owner) and the admins in 4 min',
    );
    expect(waitingLine({ ...item, escalated_at: new Date(now).toISOString() }, byId, now)).toBe(
      'Waiting for Dana (approver) — escalated to Sam (owner) and the admins',
    );
    expect(waitingLine({ routing: { approvers: ['role:approver'] } }, byId, now)).toBe('Waiting for the approvers');
    expect(waitingLine({ approvers: null }, byId, now)).toBeNull();
    expect(inMinutes(new Date(now + 65 * 60_000).toISOString(), now)).toBe('in 1 h 5 min');
    expect(inMinutes(new Date(now - 1000).toISOString(), now)).toBe('now');
  });

  it("shows a rule's routing, a quorum's approvers by name, and an invite's join link", () => {
    expect(
      ruleRoutingLine({ approvers: ['mem_dana'], escalate_after_seconds: 300, escalate_to: ['role:owner'] }, byId),
    ).toBe('Asks Dana (approver); after 5 min also the owners');
    expect(ruleRoutingLine({ decision: 'auto_approve' }, byId)).toBeNull();
    expect(approverOf({ member_id: 'mem_dana', device_id: 'dvc_1' }, byId)).toBe('Dana');
    expect(approverOf({ device_id: 'dvc_1' }, byId)).toBe('Device dvc_1');
    const link = joinLink('https://approvals.example.com', 'inv_abc');
    expect(link).toBe('https://approvals.example.com/app/#/join?code=inv_abc');
    expect(parseRoute(new URL(link).hash)).toEqual({ view: 'join', params: { code: 'inv_abc' } });
    expect(parseRoute('#/signin?ticket=ast_1')).toEqual({ view: 'signin', params: { ticket: 'ast_1' } });
    expect(parseRoute('#/team')).toEqual({ view: 'team' });
  });
});
