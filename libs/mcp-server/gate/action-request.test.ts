import { canonicalSha256 } from '@agent-auth/client';
import { CreateActionBody } from '@agent-auth/contracts';
import { describe, expect, it } from 'vitest';
import { approvedArguments, buildActionRequest, keyArgument, type GatedCall } from './action-request.js';

const writeFile = {
  description: 'Create a new file or completely overwrite an existing file with new content.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};
const call = (over: Partial<GatedCall> = {}): GatedCall => ({
  server: 'secure-filesystem-server',
  toolName: 'write_file',
  tool: writeFile,
  arguments: { path: '/tmp/notes/todo.txt', content: 'buy milk' },
  expiresInSeconds: 300,
  ...over,
});
/** The request as the service parses it: what it would accept. */
const accepted = (c: GatedCall) => CreateActionBody.parse(buildActionRequest(c));

describe('buildActionRequest', () => {
  it('titles the call by server, tool and key argument, with the arguments in metadata', () => {
    const request = buildActionRequest(call());
    expect(request).toMatchObject({
      action_type: 'system',
      title: 'MCP secure-filesystem-server: write_file /tmp/notes/todo.txt',
      risk_level: 'high',
      reversible: false,
      expires_in_seconds: 300,
      metadata: {
        source: 'mcp',
        server: 'secure-filesystem-server',
        tool_name: 'write_file',
        arguments: { path: '/tmp/notes/todo.txt', content: 'buy milk' },
      },
    });
    expect(request.description).toContain('write_file (Create a new file or completely overwrite');
    expect(request.description).toContain('may delete or overwrite data');
    expect(request.description).toContain('exactly the arguments shown');
    expect(accepted(call()).title).toBe(request.title);
  });

  it('is medium risk unless the tool is annotated destructive, and data_access for a read-only tool', () => {
    const create = buildActionRequest(
      call({ toolName: 'create_directory', tool: { annotations: { readOnlyHint: false, destructiveHint: false } } }),
    );
    expect(create).toMatchObject({ action_type: 'system', risk_level: 'medium' });
    expect(create.reversible).toBeUndefined();
    const unannotated = buildActionRequest(call({ tool: {} }));
    expect(unannotated).toMatchObject({ action_type: 'system', risk_level: 'medium' });
    const read = buildActionRequest(call({ toolName: 'read_file', tool: { annotations: { readOnlyHint: true } } }));
    expect(read).toMatchObject({ action_type: 'data_access', risk_level: 'medium' });
  });

  it('says when the server did not list the tool', () => {
    expect(buildActionRequest(call({ tool: undefined })).description).toContain('did not list this tool');
  });

  it('keeps the title to one line of at most 200 characters', () => {
    const long = buildActionRequest(call({ arguments: { path: `/tmp/${'x'.repeat(500)}\nsecond line` } }));
    expect(long.title.length).toBeLessThanOrEqual(200);
    expect(long.title).not.toContain('\n');
    expect(long.title).toMatch(/^MCP secure-filesystem-server: write_file \/tmp\/x+…$/);
    const noArgs = buildActionRequest(call({ toolName: 'list_allowed_directories', arguments: {} }));
    expect(noArgs.title).toBe('MCP secure-filesystem-server: list_allowed_directories');
  });

  it('sends arguments over the metadata limit as digest, size and a preview, and says so', () => {
    const content = 'é'.repeat(20_000);
    const args = { path: '/tmp/big.txt', content };
    const request = accepted(call({ arguments: args }));
    const metadata = request.metadata!;
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBeLessThanOrEqual(8192);
    expect(metadata).not.toHaveProperty('arguments');
    expect(metadata).toMatchObject({
      source: 'mcp',
      tool_name: 'write_file',
      arguments_sha256: canonicalSha256(args),
      arguments_bytes: Buffer.byteLength(JSON.stringify(args)),
      arguments_truncated: true,
    });
    const preview = metadata.arguments_preview as string;
    expect(JSON.stringify(args).startsWith(preview)).toBe(true);
    expect(preview.length).toBeGreaterThan(1000);
    expect(request.title).toBe('MCP secure-filesystem-server: write_file /tmp/big.txt (large arguments)');
    expect(request.description).toContain(`arguments_preview holds their first ${preview.length} characters`);
    expect(request.description).toContain('SHA-256');
  });

  it('never cuts the preview inside a surrogate pair', () => {
    for (const pad of ['', 'a', 'ab', 'abc']) {
      const request = buildActionRequest(call({ arguments: { content: pad + '😀'.repeat(9000) } }));
      const preview = request.metadata!.arguments_preview as string;
      expect(preview.isWellFormed()).toBe(true);
    }
  });

  it('the request passes the service contract for odd arguments too', () => {
    for (const args of [{}, { n: 1 }, { list: [1, 2, 3] }, { deep: { a: { b: 'c' } } }, { nul: 'a\u0000b' }])
      expect(() => accepted(call({ arguments: args }))).not.toThrow();
  });
});

describe('keyArgument', () => {
  it('prefers what the call acts on, else the first simple argument by name', () => {
    expect(keyArgument({ content: 'x', path: '/a' })).toBe('/a');
    expect(keyArgument({ source: '/a', destination: '/b' })).toBe('/a');
    expect(keyArgument({ paths: ['/a', '/b'] })).toBe('/a, /b');
    expect(keyArgument({ url: 'https://example.com' })).toBe('https://example.com');
    expect(keyArgument({ duration: 5, steps: 2 })).toBe('duration=5');
    expect(keyArgument({ edits: [{ a: 1 }], path: '  ' })).toBeNull();
    expect(keyArgument({})).toBeNull();
  });
});

describe('approvedArguments', () => {
  const args = { path: '/a', content: 'b', nested: { x: 1, y: [1, 2] } };

  it('runs the call with its own arguments when the approved request carries exactly them, in any key order', () => {
    const approved = { metadata: { arguments: { nested: { y: [1, 2], x: 1 }, content: 'b', path: '/a' } } };
    expect(approvedArguments(approved, args)).toBe(args);
  });

  it('runs it when the approved request carries their digest', () => {
    expect(approvedArguments({ metadata: { arguments_sha256: canonicalSha256(args) } }, args)).toBe(args);
  });

  it('refuses arguments other than the approved ones', () => {
    expect(approvedArguments({ metadata: { arguments: { ...args, content: 'c' } } }, args)).toBeNull();
    expect(approvedArguments({ metadata: { arguments_sha256: canonicalSha256({ path: '/a' }) } }, args)).toBeNull();
    expect(approvedArguments({ metadata: {} }, args)).toBeNull();
  });

  it("takes the holder's edited input when the service returns one", () => {
    const edited = { path: '/b', content: 'b' };
    expect(approvedArguments({ metadata: { arguments: args }, updated_input: edited }, args)).toBe(edited);
  });
});
