import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The real coding-agent CLIs (Claude Code, Codex), installed on demand from the npm registry into a cache outside the
 * repository, and run against scripted models on loopback with a hook pointed at a given endpoint. The versions are
 * pinned: the hook formats the service answers were read from these builds.
 */

export const AGENT_CLI_VERSIONS = { claudeCode: '2.1.197', codex: '0.171.0' } as const;
const CACHE = join(
  tmpdir(),
  'agent-auth-clis',
  `claude-${AGENT_CLI_VERSIONS.claudeCode}-codex-${AGENT_CLI_VERSIONS.codex}`,
);
const run = promisify(execFile);
const homes: string[] = [];

/** A fresh home folder for one CLI run (its config, sessions and working directory); removed by removeCliHomes. */
function newHome(prefix: string): string {
  const home = mkdtempSync(join(tmpdir(), prefix));
  homes.push(home);
  return home;
}

/** Removes the home folders of every CLI run so far (call once the runs' files have been checked). */
export function removeCliHomes(): void {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
}

export interface AgentClis {
  claudeCode: string;
  codex: string;
}

/** The CLIs' native binaries, installed if missing; a reason to skip when the registry or the binaries fail. */
export async function ensureAgentClis(): Promise<{ clis: AgentClis } | { skip: string }> {
  const clis = binaryPaths();
  if (!clis) return { skip: `no prebuilt Claude Code/Codex binary for ${process.platform}-${process.arch}` };
  if (!existsSync(clis.claudeCode) || !existsSync(clis.codex)) {
    mkdirSync(CACHE, { recursive: true });
    const packages = [
      `@anthropic-ai/claude-code@${AGENT_CLI_VERSIONS.claudeCode}`,
      `@openai/codex@${AGENT_CLI_VERSIONS.codex}`,
    ];
    try {
      // The native binaries come as optional dependencies; no install script is needed to run them directly.
      await run('npm', ['install', '--prefix', CACHE, '--no-audit', '--no-fund', '--ignore-scripts', ...packages], {
        timeout: 240_000,
      });
    } catch (error) {
      return { skip: `npm registry unreachable or install failed: ${firstLine(error)}` };
    }
  }
  for (const [name, path] of Object.entries(clis)) {
    try {
      await run(path, ['--version'], { timeout: 30_000, env: { PATH: process.env.PATH, HOME: tmpdir() } });
    } catch (error) {
      return { skip: `${name} binary cannot run here (${path}): ${firstLine(error)}` };
    }
  }
  return { clis };
}

function binaryPaths(): AgentClis | undefined {
  const modules = join(CACHE, 'node_modules');
  const musl = process.platform === 'linux' && !(process.report?.getReport() as any)?.header?.glibcVersionRuntime;
  const claudeKey = `${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
  const codexTriples: Record<string, string> = {
    'linux-x64': 'x86_64-unknown-linux-musl',
    'linux-arm64': 'aarch64-unknown-linux-musl',
    'darwin-x64': 'x86_64-apple-darwin',
    'darwin-arm64': 'aarch64-apple-darwin',
  };
  const triple = codexTriples[`${process.platform}-${process.arch}`];
  if (!triple || process.platform === 'win32') return undefined;
  return {
    claudeCode: join(modules, '@anthropic-ai', `claude-code-${claudeKey}`, 'claude'),
    codex: join(modules, '@openai', `codex-${process.platform}-${process.arch}`, 'vendor', triple, 'bin', 'codex'),
  };
}

function firstLine(error: unknown): string {
  const text = (error as { stderr?: string }).stderr || (error as Error).message || String(error);
  const lines = text.trim().split('\n');
  // npm's own summary is spread over several lines; the first "npm error" line names the failure (code, URL).
  return (lines.find((line) => /^npm error (?!A complete log)/.test(line)) ?? lines[0] ?? '').trim();
}

/** Where a CLI's hook posts, and the agent key it sends (from an environment variable, as users set it up). */
export interface HookTarget {
  /** e.g. `http://127.0.0.1:8080/hooks/claude-code?timeout=60` */
  url: string;
  apiKey: string;
}

export interface CliRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The working directory the CLI ran in (a fresh temporary folder). */
  workDir: string;
}

export interface ClaudeCodeRun {
  binary: string;
  modelUrl: string;
  hook: HookTarget;
  event: 'PreToolUse' | 'PermissionRequest';
  prompt: string;
  /** Where outside connections are sent (a refusing proxy), so a run stays on loopback. */
  proxyUrl: string;
  workDir?: string;
}

/**
 * Runs `claude -p` once. PreToolUse runs plain `-p`; PermissionRequest needs a mode where a permission prompt exists,
 * so it runs the SDK's stream-json mode with `--permission-prompt-tool stdio` (plain `-p` never asks: it denies).
 */
export async function runClaudeCode(options: ClaudeCodeRun): Promise<CliRun> {
  const home = newHome('claude-code-home-');
  const workDir = options.workDir ?? join(home, 'work');
  mkdirSync(workDir, { recursive: true });
  const settingsPath = join(home, 'settings.json');
  const hook = {
    type: 'http',
    url: options.hook.url,
    headers: { Authorization: 'Bearer $AGENT_AUTH_API_KEY' },
    allowedEnvVars: ['AGENT_AUTH_API_KEY'],
    timeout: 120,
  };
  writeFileSync(settingsPath, JSON.stringify({ hooks: { [options.event]: [{ matcher: '*', hooks: [hook] }] } }));
  const common = ['--settings', settingsPath, '--model', 'claude-sonnet-4-5'];
  const args =
    options.event === 'PermissionRequest'
      ? [
          '-p',
          '--input-format',
          'stream-json',
          '--output-format',
          'stream-json',
          '--verbose',
          '--permission-prompt-tool',
          'stdio',
          ...common,
        ]
      : ['-p', options.prompt, '--output-format', 'json', ...common];
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: options.modelUrl,
    ANTHROPIC_API_KEY: 'sk-ant-scripted',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    AGENT_AUTH_API_KEY: options.hook.apiKey,
    ...proxyEnv(options.proxyUrl),
  };
  const stdin =
    options.event === 'PermissionRequest'
      ? `${JSON.stringify({ type: 'user', message: { role: 'user', content: options.prompt }, parent_tool_use_id: null, session_id: '' })}\n`
      : undefined;
  return {
    ...(await runChild(options.binary, args, { env, cwd: workDir, stdin, endStdinOn: '"type":"result"' })),
    workDir,
  };
}

export interface CodexRun {
  binary: string;
  /** The scripted Responses API's base URL (…/v1). */
  modelBaseUrl: string;
  hook: HookTarget;
  prompt: string;
  proxyUrl: string;
}

/**
 * Runs `codex exec` once with a PreToolUse command hook that pipes the hook input to the endpoint with curl, as a user
 * sets it up (Codex has no http hooks): a failed call exits 2, which Codex reads as a block, so the hook fails closed.
 */
export async function runCodex(options: CodexRun): Promise<CliRun> {
  const home = newHome('codex-home-');
  const workDir = join(home, 'work');
  const codexHome = join(home, '.codex');
  mkdirSync(workDir, { recursive: true });
  mkdirSync(codexHome, { recursive: true });
  const command =
    `curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $AGENT_AUTH_API_KEY" ` +
    `--data-binary @- '${options.hook.url}' || { echo 'agent-auth: the approval service did not answer' >&2; exit 2; }`;
  const hooks = { PreToolUse: [{ matcher: '.*', hooks: [{ type: 'command', command, timeout: 120 }] }] };
  writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify({ hooks }, null, 2));
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      // Without these Codex syncs its curated plugins (github.com, chatgpt.com) and sends analytics at start.
      '[features]',
      'plugins = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.scripted]',
      'name = "Scripted"',
      `base_url = "${options.modelBaseUrl}"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_MODEL_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    CODEX_HOME: codexHome,
    SCRIPTED_MODEL_KEY: 'scripted',
    AGENT_AUTH_API_KEY: options.hook.apiKey,
    RUST_LOG: 'error',
    ...proxyEnv(options.proxyUrl),
  };
  const args = [
    'exec',
    '--skip-git-repo-check',
    '--dangerously-bypass-hook-trust',
    '-C',
    workDir,
    '--json',
    options.prompt,
  ];
  return { ...(await runChild(options.binary, args, { env, cwd: workDir })), workDir };
}

function proxyEnv(proxyUrl: string): Record<string, string> {
  return {
    HTTPS_PROXY: proxyUrl,
    HTTP_PROXY: proxyUrl,
    https_proxy: proxyUrl,
    http_proxy: proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

function runChild(
  binary: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; stdin?: string; endStdinOn?: string },
): Promise<Omit<CliRun, 'workDir'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      // Stream-json mode reads further messages until stdin ends: end it once the run's result is out.
      if (options.endStdinOn && stdout.includes(options.endStdinOn)) child.stdin.end();
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    });
    if (options.stdin) child.stdin.write(options.stdin);
    else child.stdin.end();
  });
}
