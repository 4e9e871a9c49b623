// Release check: packs @agent-auth/client and @agent-auth/mcp-server, installs both tarballs into an empty project,
// starts the packed bin over stdio with the official SDK client, lists the tools and makes one call that must come
// back as a tool error (no service at the URL), then removes everything. Run: node libs/mcp-server/pack-check.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const libs = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'aa-pack-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
try {
  // npm pack runs each package's prepack (tsc -b) and prints the tarball's file name last.
  const local = ['client', 'mcp-server'].map((p) => join(dir, run('npm', ['pack', '--silent', '--pack-destination', dir], join(libs, p)).trim().split('\n').pop()));
  writeFileSync(join(dir, 'package.json'), '{"name":"pack-check","private":true,"type":"module"}');
  run('npm', ['install', '--silent', '--no-audit', '--no-fund', ...local], dir);
  writeFileSync(
    join(dir, 'check.mjs'),
    `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const transport = new StdioClientTransport({ command: 'npx', args: ['--no-install', 'agent-auth-mcp-server'], env: { PATH: process.env.PATH, AGENT_AUTH_API_KEY: 'aa_test', AGENT_AUTH_URL: 'http://127.0.0.1:9/api/v1' }, stderr: 'pipe' });
const client = new Client({ name: 'pack-check', version: '0' });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
if (tools.length !== 7) throw new Error('expected 7 tools, got ' + tools);
const r = await client.callTool({ name: 'check_approval', arguments: { request_id: 'act_x' } });
if (!r.isError) throw new Error('expected a tool error');
await client.close();
process.stdout.write('packed server started; tools: ' + tools.join(', ') + '; unreachable service -> ' + r.content[0].text + '\\n');
`,
  );
  process.stdout.write(run('node', ['check.mjs'], dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
