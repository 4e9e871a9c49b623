import { describe, expect, it } from 'vitest';
import { inviteCodeHash, inviteRefusal, isWellFormedInviteCode, newInviteCode, ownerRuleRefusal } from './members.js';

describe('invite codes', () => {
  it('are well formed, distinct, and stored as a hash that is not the code', () => {
    const a = newInviteCode();
    const b = newInviteCode();
    expect(a).toMatch(/^inv_[A-Za-z0-9]{32}$/);
    expect(isWellFormedInviteCode(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(inviteCodeHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(inviteCodeHash(a)).not.toContain(a.slice(4));
    for (const bad of ['', 'inv_short', `dev_${a.slice(4)}`, `${a}x`, `${a.slice(0, -1)}-`])
      expect(isWellFormedInviteCode(bad), bad).toBe(false);
  });

  it('let a device join once, before they expire', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const later = new Date(now.getTime() + 1000);
    expect(inviteRefusal(undefined, now)).toBe('not_found');
    expect(inviteRefusal({ used_at: null, expires_at: later }, now)).toBeUndefined();
    expect(inviteRefusal({ used_at: now, expires_at: later }, now)).toBe('used');
    expect(inviteRefusal({ used_at: null, expires_at: now }, now)).toBe('expired');
  });
});

describe('the rules about owners', () => {
  it('only an owner makes, changes or removes an owner', () => {
    expect(ownerRuleRefusal({ by: 'admin', role: 'owner', owners: 1 })).toBe('owner_only');
    expect(ownerRuleRefusal({ by: 'admin', target: { role: 'owner' }, role: 'admin', owners: 2 })).toBe('owner_only');
    expect(ownerRuleRefusal({ by: 'admin', target: { role: 'owner' }, removing: true, owners: 2 })).toBe('owner_only');
    expect(ownerRuleRefusal({ by: 'admin', target: { role: 'approver' }, role: 'auditor', owners: 1 })).toBeUndefined();
    expect(ownerRuleRefusal({ by: 'admin', role: 'approver', owners: 1 })).toBeUndefined();
    expect(ownerRuleRefusal({ by: 'owner', role: 'owner', owners: 1 })).toBeUndefined();
  });

  it('never leaves an account without an owner', () => {
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, removing: true, owners: 1 })).toBe('last_owner');
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, role: 'admin', owners: 1 })).toBe('last_owner');
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, removing: true, owners: 2 })).toBeUndefined();
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, role: 'admin', owners: 2 })).toBeUndefined();
    // Renaming the only owner leaves the role as it is.
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, owners: 1 })).toBeUndefined();
    expect(ownerRuleRefusal({ by: 'owner', target: { role: 'owner' }, role: 'owner', owners: 1 })).toBeUndefined();
  });
});
