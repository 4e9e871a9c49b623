import { describe, expect, it } from 'vitest';
import { parseGateArgs } from './options.js';

describe('parseGateArgs', () => {
  it('takes the command after --, with the defaults writes and 300 s', () => {
    expect(parseGateArgs(['--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp'])).toEqual({
      ask: 'writes',
      timeoutSeconds: 300,
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
    });
  });

  it('reads --ask and --timeout, spaced or with =, and a command without --', () => {
    expect(parseGateArgs(['--ask', 'all', '--timeout=60', 'node', 'server.js', '--flag'])).toEqual({
      ask: 'all',
      timeoutSeconds: 60,
      command: 'node',
      args: ['server.js', '--flag'],
    });
    expect(parseGateArgs(['--ask=writes', '--timeout', '1', '--', '--odd-command'])).toMatchObject({
      ask: 'writes',
      timeoutSeconds: 1,
      command: '--odd-command',
    });
  });

  it('refuses what it cannot run, naming the option', () => {
    expect(() => parseGateArgs(['--ask', 'some', '--', 'x'])).toThrow('--ask must be one of writes, all, not "some"');
    expect(() => parseGateArgs(['--timeout', '0', '--', 'x'])).toThrow(
      '--timeout must be a whole number of seconds from 1 to 3600',
    );
    expect(() => parseGateArgs(['--timeout', '3601', 'x'])).toThrow('--timeout');
    expect(() => parseGateArgs(['--timeout', '2.5', 'x'])).toThrow('--timeout');
    expect(() => parseGateArgs(['--timeout'])).toThrow('--timeout needs a value');
    expect(() => parseGateArgs(['--verbose', 'x'])).toThrow('unknown option --verbose');
    expect(() => parseGateArgs(['--ask', 'all'])).toThrow('name the MCP server to start');
    expect(() => parseGateArgs(['--'])).toThrow('name the MCP server to start');
  });

  it('answers help for -h and --help', () => {
    expect(parseGateArgs(['--help'])).toBe('help');
    expect(parseGateArgs(['-h', '--', 'x'])).toBe('help');
  });
});
