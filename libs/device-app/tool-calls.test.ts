import { describe, expect, it } from 'vitest';
// The browser module itself, run in Node: the same code the device app runs.
import {
  acceptsEdits,
  commandPrefix,
  editableOf,
  editedInputOf,
  patchLines,
  sessionGrantOf,
  sessionGrantWords,
  shortened,
  toolCallOf,
} from './public/tool-calls.js';

/** A pending request as GET /pending lists a hook call's. */
function hookItem(source: string, tool_name: string, tool_input: unknown, extra: Record<string, unknown> = {}) {
  return {
    id: 'act_1',
    title: 'x',
    quorum: null,
    metadata: {
      source,
      hook_event_name: 'PreToolUse',
      tool_name,
      session_id: 'sess-1',
      cwd: '/home/dev/demo',
      tool_use_id: 'toolu_1',
      tool_input,
      ...extra,
    },
  };
}

const PATCH = '*** Begin Patch\n*** Update File: /home/dev/app/notes.txt\n@@\n-hello\n+goodbye\n*** End Patch\n';

describe('tool calls in the device app', () => {
  it('reads who asks, where, with which tool and what it runs or changes', () => {
    expect(toolCallOf(hookItem('claude-code', 'Bash', { command: 'npm test', description: 'Run the tests' }))).toEqual({
      source: 'claude-code',
      agent: 'Claude Code',
      cwd: '/home/dev/demo',
      tool: 'Bash',
      sessionId: 'sess-1',
      event: 'PreToolUse',
      input: { command: 'npm test', description: 'Run the tests' },
      kind: 'shell',
      command: 'npm test',
      file: null,
      truncated: null,
    });
    const edit = toolCallOf(hookItem('claude-code', 'Edit', { file_path: '/a.ts', old_string: 'a', new_string: 'b' }));
    expect(edit).toMatchObject({ kind: 'edit', file: '/a.ts', command: null });
    expect(toolCallOf(hookItem('codex', 'apply_patch', { command: PATCH }))).toMatchObject({
      agent: 'Codex',
      kind: 'patch',
      file: '/home/dev/app/notes.txt',
    });
    expect(toolCallOf(hookItem('claude-code', 'Write', { file_path: '/b', content: 'x' }))?.kind).toBe('write');
    expect(toolCallOf(hookItem('claude-code', 'mcp__everything__echo', { message: 'hi' }))?.kind).toBe('json');
    // Codex's argv form of a shell script: the script is the command.
    expect(toolCallOf(hookItem('codex', 'shell', { command: ['bash', '-lc', 'ls -la'] }))?.command).toBe('ls -la');
  });

  it("reads the MCP gate's request: the server as the agent, the arguments in full or by preview and digest", () => {
    const full = {
      id: 'a',
      metadata: { source: 'mcp', server: 'filesystem', tool_name: 'write_file', arguments: { path: '/x' } },
    };
    expect(toolCallOf(full)).toMatchObject({
      agent: 'MCP: filesystem',
      tool: 'write_file',
      input: { path: '/x' },
      cwd: null,
    });
    const big = {
      id: 'b',
      metadata: {
        source: 'mcp',
        server: 'fs',
        tool_name: 'write_file',
        arguments_sha256: 'ab'.repeat(32),
        arguments_bytes: 90_000,
        arguments_truncated: true,
        arguments_preview: '{"path":"/x","content":"aaa',
      },
    };
    expect(toolCallOf(big)).toMatchObject({
      input: null,
      truncated: { sha256: 'ab'.repeat(32), bytes: 90_000, preview: '{"path":"/x","content":"aaa' },
    });
    expect(acceptsEdits(big)).toBe(false);
  });

  it('is null for a request that is no tool call', () => {
    expect(toolCallOf({ metadata: { to: 'landlord@example.com' } })).toBeNull();
    expect(toolCallOf({ metadata: { source: 'cursor', tool_name: 'Bash' } })).toBeNull();
    expect(toolCallOf({ metadata: { source: 'claude-code' } })).toBeNull();
    expect(toolCallOf({})).toBeNull();
  });

  it('offers approve with changes only where the client runs an edited input, and never under a quorum', () => {
    expect(acceptsEdits(hookItem('claude-code', 'Bash', { command: 'ls' }))).toBe(true);
    expect(
      acceptsEdits(hookItem('claude-code', 'Bash', { command: 'ls' }, { hook_event_name: 'PermissionRequest' })),
    ).toBe(true);
    expect(acceptsEdits(hookItem('codex', 'Bash', { command: 'ls' }))).toBe(true);
    expect(acceptsEdits(hookItem('codex', 'Bash', { command: 'ls' }, { hook_event_name: 'PermissionRequest' }))).toBe(
      false,
    );
    expect(
      acceptsEdits({ ...hookItem('claude-code', 'Bash', { command: 'ls' }), quorum: { required: 2, approvals: [] } }),
    ).toBe(false);
    expect(acceptsEdits({ metadata: { source: 'mcp', server: 's', tool_name: 't', arguments: {} } })).toBe(false);
  });

  it('takes the first word of a command, and its subcommand for tools that have them, exactly as written', () => {
    expect(commandPrefix('npm test')).toBe('npm test');
    expect(commandPrefix('npm run build -- --watch')).toBe('npm run build');
    expect(commandPrefix('git push --force origin main')).toBe('git push');
    expect(commandPrefix('git  status')).toBe('git  status');
    expect(commandPrefix('rm -rf dist')).toBe('rm');
    expect(commandPrefix('touch /home/dev/app/probe-file')).toBe('touch');
    expect(commandPrefix('npm --version')).toBe('npm');
    expect(commandPrefix('  ls -la')).toBe('ls');
    expect(commandPrefix('cat <<EOF\nhello\nEOF')).toBe('cat');
    expect(commandPrefix('')).toBe('');
    for (const command of ['npm test', 'git push -f', '  ls -la', 'npm run build'])
      expect(command.trimStart().startsWith(commandPrefix(command))).toBe(true);
  });

  it('makes the grant of "allow for this session": the tool, the session, and for a command its start', () => {
    const bash = toolCallOf(hookItem('claude-code', 'Bash', { command: 'npm test' }))!;
    const grant = sessionGrantOf(bash, { prefix: ' npm test ' });
    expect(grant).toEqual({
      duration_seconds: 8 * 3600,
      match: { tool_name: 'Bash', session_id: 'sess-1', command_prefix: 'npm test' },
    });
    expect(sessionGrantWords(bash, grant)).toBe('Bash commands starting with “npm test” in this session');
    const any = sessionGrantOf(bash, { prefix: '', seconds: 3600 });
    expect(any).toEqual({ duration_seconds: 3600, match: { tool_name: 'Bash', session_id: 'sess-1' } });
    expect(sessionGrantWords(bash, any)).toBe('any Bash command in this session');
    const edit = toolCallOf(hookItem('claude-code', 'Edit', { file_path: '/a', old_string: 'a', new_string: 'b' }))!;
    expect(sessionGrantOf(edit, { prefix: 'ignored' }).match).toEqual({ tool_name: 'Edit', session_id: 'sess-1' });
    const mcp = toolCallOf({ metadata: { source: 'mcp', server: 'fs', tool_name: 'read_file', arguments: {} } })!;
    const byTool = sessionGrantOf(mcp);
    expect(byTool.match).toEqual({ tool_name: 'read_file' });
    expect(sessionGrantWords(mcp, byTool)).toBe('read_file calls from MCP: fs');
  });

  it('edits a command, a patch or a new text as text, anything else as JSON, and says what cannot be sent', () => {
    const bash = toolCallOf(hookItem('claude-code', 'Bash', { command: 'npm test', description: 'd' }))!;
    expect(editableOf(bash)).toEqual({ field: 'command', label: 'Command', text: 'npm test' });
    expect(editedInputOf(bash, 'npm test -- --run')).toEqual({
      input: { command: 'npm test -- --run', description: 'd' },
    });
    expect(editedInputOf(bash, 'npm test').error).toMatch(/Nothing is changed/);

    const patch = toolCallOf(hookItem('codex', 'apply_patch', { command: PATCH }))!;
    expect(editableOf(patch)).toMatchObject({ field: 'command', label: 'Patch', text: PATCH });
    const edit = toolCallOf(hookItem('claude-code', 'Edit', { file_path: '/a', old_string: 'a', new_string: 'b' }))!;
    expect(editedInputOf(edit, 'c')).toEqual({ input: { file_path: '/a', old_string: 'a', new_string: 'c' } });

    const mcpTool = toolCallOf(hookItem('claude-code', 'mcp__everything__echo', { message: 'hi' }))!;
    expect(editableOf(mcpTool)).toEqual({ field: null, label: 'Tool input (JSON)', text: '{\n  "message": "hi"\n}' });
    expect(editedInputOf(mcpTool, '{"message":"bye"}')).toEqual({ input: { message: 'bye' } });
    expect(editedInputOf(mcpTool, '{"message":')).toHaveProperty('error', expect.stringMatching(/not valid JSON/));
    expect(editedInputOf(mcpTool, '["x"]').error).toMatch(/must be a JSON object/);
    expect(editedInputOf(mcpTool, JSON.stringify({ message: 'a'.repeat(70 * 1024) })).error).toMatch(/64 KiB/);
  });

  it('shortens a long command for a card and says so; marks the lines of a patch', () => {
    expect(shortened('npm test')).toEqual({ text: 'npm test', cut: false, lines: 1 });
    const script = Array.from({ length: 10 }, (_, i) => `echo ${i}`).join('\n');
    expect(shortened(script)).toEqual({ text: 'echo 0\necho 1\necho 2\necho 3', cut: true, lines: 10 });
    expect(shortened('x'.repeat(500)).text).toHaveLength(280);
    expect(patchLines(PATCH).map((l) => l.kind)).toEqual(['head', 'head', 'head', 'del', 'add', 'head', 'same']);
  });
});
