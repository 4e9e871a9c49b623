import { describe, expect, it } from 'vitest';
import { createNoPolicyAccounts } from './no-policy-accounts.js';

describe('accounts without policy', () => {
  it('answers for a noted account until its policy changes', () => {
    const accounts = createNoPolicyAccounts({ ttlMs: 60_000, maxAccounts: 10 });
    expect(accounts.emptyPolicyVersion('acc_a')).toBeUndefined();
    accounts.note('acc_a', 'v-empty', accounts.ticket());
    expect(accounts.emptyPolicyVersion('acc_a')).toBe('v-empty');
    expect(accounts.emptyPolicyVersion('acc_b')).toBeUndefined();
    accounts.drop('acc_a');
    expect(accounts.emptyPolicyVersion('acc_a')).toBeUndefined();
  });

  it('does not keep an answer asked for before a change and heard after it', () => {
    const accounts = createNoPolicyAccounts({ ttlMs: 60_000, maxAccounts: 10 });
    const ticket = accounts.ticket(); // the decision is asked for
    accounts.drop('acc_a'); // a rule is created meanwhile
    accounts.note('acc_a', 'v-empty', ticket); // the answer from before the rule arrives
    expect(accounts.emptyPolicyVersion('acc_a')).toBeUndefined();
  });

  it('forgets an account after the time to live (bounds a lost event)', () => {
    let clock = 0;
    const accounts = createNoPolicyAccounts({ ttlMs: 1_000, maxAccounts: 10, now: () => clock });
    accounts.note('acc_a', 'v-empty', accounts.ticket());
    clock = 999;
    expect(accounts.emptyPolicyVersion('acc_a')).toBe('v-empty');
    clock = 1_000;
    expect(accounts.emptyPolicyVersion('acc_a')).toBeUndefined();
  });

  it('keeps at most maxAccounts, dropping the one noted longest ago', () => {
    const accounts = createNoPolicyAccounts({ ttlMs: 60_000, maxAccounts: 2 });
    for (const id of ['acc_a', 'acc_b', 'acc_c']) accounts.note(id, 'v', accounts.ticket());
    expect(accounts.emptyPolicyVersion('acc_a')).toBeUndefined();
    expect(accounts.emptyPolicyVersion('acc_b')).toBe('v');
    expect(accounts.emptyPolicyVersion('acc_c')).toBe('v');
  });
});
