import { describe, expect, it } from 'vitest';
import {
  commandStartsWith,
  coveringGrants,
  grantCovers,
  grantMatchOf,
  type GrantScope,
  matchCovers,
} from './grant-matching.js';

const now = new Date('2026-01-01T12:00:00Z');
const grant = (over: Partial<GrantScope> = {}): GrantScope => ({
  id: 'grt_a',
  agent_id: 'agt_1',
  action_type: 'purchase',
  recipient: 'shop',
  currency: 'USD',
  expires_at: new Date('2026-01-01T13:00:00Z'),
  match: null,
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

describe('grant match (allow for the rest of the session)', () => {
  const call = {
    agent_id: 'agt_1',
    action_type: 'system',
    recipient: null,
    currency: 'USD',
    tool_name: 'Bash',
    session_id: 'sess-1',
    command: 'npm test -- --watch=false',
  };
  const session = { tool_name: 'Bash', session_id: 'sess-1', command_prefix: 'npm test' };
  const scoped = (match: GrantScope['match']) => grant({ action_type: 'system', recipient: null, match });

  it('covers a tool call that meets every set field', () => {
    expect(grantCovers(scoped(session), call, now)).toBe(true);
    expect(grantCovers(scoped({ ...session, command_prefix: null }), { ...call, command: 'rm -rf /' }, now)).toBe(true);
    expect(matchCovers({ tool_name: null, session_id: 'sess-1', command_prefix: null }, call)).toBe(true);
  });

  it('does not cover another tool, another session or another command', () => {
    expect(grantCovers(scoped(session), { ...call, tool_name: 'Write' }, now)).toBe(false);
    expect(grantCovers(scoped(session), { ...call, session_id: 'sess-2' }, now)).toBe(false);
    expect(grantCovers(scoped(session), { ...call, session_id: null }, now)).toBe(false);
    expect(grantCovers(scoped(session), { ...call, command: 'rm -rf dist' }, now)).toBe(false);
  });

  it('with a command prefix never covers a call without a command, nor a request that is no tool call', () => {
    expect(
      matchCovers({ tool_name: null, session_id: null, command_prefix: 'npm test' }, { ...call, command: null }),
    ).toBe(false);
    const plain = { agent_id: 'agt_1', action_type: 'system', recipient: null, currency: 'USD' };
    expect(grantCovers(scoped(session), plain, now)).toBe(false);
    expect(grantCovers(scoped({ tool_name: null, session_id: 'sess-1', command_prefix: null }), plain, now)).toBe(
      false,
    );
  });

  it('still needs the scope of a grant: agent, action type, recipient, currency, expiry', () => {
    expect(grantCovers(scoped(session), { ...call, agent_id: 'agt_2' }, now)).toBe(false);
    expect(grantCovers(scoped(session), { ...call, action_type: 'data_access' }, now)).toBe(false);
    expect(grantCovers({ ...scoped(session), expires_at: now }, call, now)).toBe(false);
  });

  it('without a match keeps covering every request of its scope, tool calls or not', () => {
    expect(grantCovers(scoped(null), call, now)).toBe(true);
    expect(
      grantCovers(scoped(null), { ...call, tool_name: undefined, session_id: undefined, command: undefined }, now),
    ).toBe(true);
  });

  it('reads a command as the prefix with more arguments only', () => {
    expect(commandStartsWith('npm test', 'npm test')).toBe(true);
    expect(commandStartsWith('npm test -- --watch=false', 'npm test')).toBe(true);
    expect(commandStartsWith('  npm test', 'npm test')).toBe(true);
    expect(commandStartsWith('npm test 2>&1', 'npm test')).toBe(true);
    expect(commandStartsWith('npm test > /dev/null', 'npm test')).toBe(true);
    expect(commandStartsWith('ls /tmp/build', 'ls /tmp/')).toBe(true);
    expect(commandStartsWith('npm testify', 'npm test')).toBe(false);
    expect(commandStartsWith('npm test-publish', 'npm test')).toBe(false);
    expect(commandStartsWith('npx npm test', 'npm test')).toBe(false);
    expect(commandStartsWith(null, 'npm test')).toBe(false);
    expect(commandStartsWith('', 'npm test')).toBe(false);
  });

  it('does not read a chained, piped, substituted or redirected command as the prefix with arguments', () => {
    for (const rest of [
      '; rm -rf /',
      ' && rm -rf /',
      ' || rm -rf /',
      ' | sh',
      ' & rm -rf /',
      '\nrm -rf /',
      ' `rm -rf /`',
      ' $(rm -rf /)',
      ' > package.json',
      ' >> ~/.bashrc',
      ' < /etc/passwd',
      ' > /dev/null.txt',
    ]) {
      expect(commandStartsWith(`npm test${rest}`, 'npm test'), rest).toBe(false);
    }
  });

  it('reads a match from its columns: null when none is set', () => {
    expect(grantMatchOf({ match_tool_name: null, match_session_id: null, match_command_prefix: null })).toBeNull();
    expect(grantMatchOf({ match_tool_name: 'Bash', match_session_id: null, match_command_prefix: null })).toEqual({
      tool_name: 'Bash',
      session_id: null,
      command_prefix: null,
    });
  });

  it('lists only the grants whose match covers the call', () => {
    const any = scoped(null);
    const thisSession = { ...scoped(session), id: 'grt_session' };
    const otherSession = { ...scoped({ ...session, session_id: 'sess-2' }), id: 'grt_other' };
    expect(coveringGrants([otherSession, thisSession, any], call, now).map((g) => g.id)).toEqual([
      'grt_session',
      'grt_a',
    ]);
  });
});
