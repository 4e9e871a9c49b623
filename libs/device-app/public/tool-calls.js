// A coding agent's tool call (Claude Code's or Codex's hook, or the MCP gate) as the app shows it: which agent asks,
// in which folder, with which tool, and what it would run or change. Pure functions over a pending request's
// metadata, so they run in the browser and in Node's tests alike.

const SOURCES = { 'claude-code': 'Claude Code', codex: 'Codex', mcp: 'MCP' };
const SHELL_TOOLS = new Set(['Bash', 'shell', 'local_shell', 'exec_command', 'container.exec', 'unified_exec']);
/** Tools whose first word is followed by a subcommand: the prefix takes both (`npm test`, `git push`). */
const SUBCOMMAND_TOOLS = new Set([
  'npm',
  'npx',
  'pnpm',
  'yarn',
  'bun',
  'deno',
  'node',
  'git',
  'gh',
  'cargo',
  'go',
  'docker',
  'kubectl',
  'helm',
  'terraform',
  'make',
  'pip',
  'pip3',
  'uv',
  'poetry',
  'dotnet',
  'mvn',
  'gradle',
  './gradlew',
  'bundle',
  'rake',
  'composer',
  'brew',
  'systemctl',
]);
/** A subcommand that takes the script's name next: the prefix takes that too (`npm run build`). */
const RUNNERS = new Set(['run', 'exec', 'run-script', 'x']);
const SUBCOMMAND = /^[A-Za-z0-9][\w:.@/-]*$/;
/** Largest tool input an approval with changes may carry, in bytes of its JSON (as the service accepts). */
export const MAX_EDITED_INPUT_BYTES = 64 * 1024;
/** Longest note a denial carries to the agent. */
export const MAX_DENY_NOTE = 500;
/** How long "Allow for this session" lasts unless the holder picks otherwise: a working day. */
export const SESSION_GRANT_SECONDS = 8 * 3600;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v) => (typeof v === 'string' && v.length > 0 ? v : null);

/** The shell command of a tool input: one string, or Codex's argv (`bash -lc <script>` is the script). */
function shellCommandOf(input) {
  const command = input.command ?? input.cmd;
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
    const [shell, flag, script] = command;
    if (command.length === 3 && /(^|\/)(ba|z)?sh$/.test(shell) && /^-l?c$/.test(flag)) return script;
    return command.join(' ');
  }
  return text(command);
}

/** The field of an apply_patch input that holds the patch (Codex sends it as `command`). */
function patchField(input) {
  return ['patch', 'input', 'command'].find(
    (k) => typeof input[k] === 'string' && input[k].includes('*** Begin Patch'),
  );
}

/** What the input is, for showing and editing: a command, an edit, a file's content, a patch, or JSON. */
function kindOf(tool, input) {
  if (SHELL_TOOLS.has(tool) && shellCommandOf(input) !== null) return 'shell';
  if (tool === 'apply_patch' && patchField(input)) return 'patch';
  if ((tool === 'Edit' || tool === 'str_replace') && typeof input.new_string === 'string') return 'edit';
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) return 'multi-edit';
  if (tool === 'Write' && typeof input.content === 'string') return 'write';
  if (tool === 'NotebookEdit' && typeof input.new_source === 'string') return 'notebook';
  return 'json';
}

/** The file a call changes or reads: the path it names, or the first an apply_patch names. */
function fileOf(input, kind) {
  const named = text(input.file_path) ?? text(input.notebook_path) ?? text(input.path);
  if (named) return named;
  if (kind !== 'patch') return null;
  return input[patchField(input)].match(/^\*\*\* (?:Update|Add|Delete) File: (.+)$/m)?.[1] ?? null;
}

/**
 * The tool call a pending request stands for, or null for any other request: `agent` as a person knows it
 * ("Claude Code", "Codex", "MCP: filesystem"), `cwd`, `tool`, `sessionId`, `event` (the hook event), `input` (the
 * whole tool input; null when the MCP gate sent only a preview), `kind`, the `command` or `file` it is about, and
 * `truncated` ({sha256, bytes, preview}) when the MCP gate's arguments were too large to carry in full.
 */
export function toolCallOf(item) {
  const m = item?.metadata;
  if (!isObject(m) || !Object.hasOwn(SOURCES, m.source) || !text(m.tool_name)) return null;
  const mcp = m.source === 'mcp';
  const input = mcp ? (isObject(m.arguments) ? m.arguments : null) : isObject(m.tool_input) ? m.tool_input : {};
  const kind = input ? kindOf(m.tool_name, input) : 'json';
  return {
    source: m.source,
    agent: mcp ? `MCP: ${text(m.server) ?? 'server'}` : SOURCES[m.source],
    cwd: text(m.cwd),
    tool: m.tool_name,
    sessionId: text(m.session_id),
    event: text(m.hook_event_name),
    input,
    kind,
    command: kind === 'shell' ? shellCommandOf(input) : null,
    file: input ? fileOf(input, kind) : null,
    truncated:
      mcp && !input && m.arguments_truncated
        ? { sha256: m.arguments_sha256, bytes: m.arguments_bytes, preview: String(m.arguments_preview ?? '') }
        : null,
  };
}

/** Whether the holder may approve this request with changes: Claude Code, or Codex before the tool runs; no quorum. */
export function acceptsEdits(item, call = toolCallOf(item)) {
  if (!call?.input || item.quorum) return false;
  return call.source === 'claude-code' || (call.source === 'codex' && call.event === 'PreToolUse');
}

/**
 * The first word(s) of a command, exactly as written (so the command starts with it): the program, and its
 * subcommand for tools that have them (`npm test`, `git push`, `npm run build`); '' for an empty command.
 */
export function commandPrefix(command) {
  const line = (command ?? '').split('\n')[0];
  const words = [...line.matchAll(/\S+/g)];
  if (!words.length) return '';
  let take = 1;
  if (SUBCOMMAND_TOOLS.has(words[0][0]) && words[1] && SUBCOMMAND.test(words[1][0])) {
    take = 2;
    if (RUNNERS.has(words[1][0]) && words[2] && SUBCOMMAND.test(words[2][0])) take = 3;
  }
  const last = words[take - 1];
  return line.slice(words[0].index, last.index + last[0].length);
}

/**
 * The `grant` of "Allow for this session": this tool, in this session (when the client names one), and for a shell
 * command only commands starting with `prefix` (none when the holder cleared it).
 */
export function sessionGrantOf(call, { prefix = '', seconds = SESSION_GRANT_SECONDS } = {}) {
  const match = { tool_name: call.tool };
  if (call.sessionId) match.session_id = call.sessionId;
  const start = prefix.trim();
  if (call.kind === 'shell' && start) match.command_prefix = start;
  return { duration_seconds: seconds, match };
}

/** "Bash commands starting with “npm test” in this session": what a session grant lets the agent do, in words. */
export function sessionGrantWords(call, grant) {
  const what = grant.match.command_prefix
    ? `${call.tool} commands starting with “${grant.match.command_prefix}”`
    : call.kind === 'shell'
      ? `any ${call.tool} command`
      : `${call.tool} calls`;
  return `${what} ${grant.match.session_id ? 'in this session' : `from ${call.agent}`}`;
}

/** What the holder edits for "Approve with changes": one field of the input as text, or the whole input as JSON. */
export function editableOf(call) {
  const field = (name, label) => ({ field: name, label, text: String(call.input[name]) });
  switch (call.kind) {
    case 'shell':
      return typeof call.input.command === 'string'
        ? field('command', 'Command')
        : { field: null, label: 'Tool input (JSON)', text: JSON.stringify(call.input, null, 2) };
    case 'patch':
      return field(patchField(call.input), 'Patch');
    case 'edit':
      return field('new_string', 'New text (replaces the old text)');
    case 'write':
      return field('content', 'File content');
    case 'notebook':
      return field('new_source', 'New cell source');
    default:
      return { field: null, label: 'Tool input (JSON)', text: JSON.stringify(call.input, null, 2) };
  }
}

/**
 * The `updated_input` of an approval with changes from the editor's text: the input with that field replaced, or
 * the JSON as typed. `{error}` when it is not a JSON object, is unchanged, or is too large to send.
 */
export function editedInputOf(call, typed) {
  const editable = editableOf(call);
  let input;
  if (editable.field) input = { ...call.input, [editable.field]: typed };
  else {
    try {
      input = JSON.parse(typed);
    } catch (err) {
      return { error: `This is not valid JSON: ${err.message}` };
    }
    if (!isObject(input)) return { error: 'The tool input must be a JSON object: { … }.' };
  }
  if (JSON.stringify(input) === JSON.stringify(call.input))
    return { error: 'Nothing is changed yet: edit it first, or use Approve.' };
  if (new TextEncoder().encode(JSON.stringify(input)).length > MAX_EDITED_INPUT_BYTES)
    return {
      error: `The edited input is larger than ${MAX_EDITED_INPUT_BYTES / 1024} KiB, more than the agent takes.`,
    };
  return { input };
}

/**
 * At most `lines` lines and `chars` characters of a long text, for a card: `cut` says whether anything was left out
 * (the card then says so and links to the whole), `lines` how many lines the whole has.
 */
export function shortened(whole, { lines = 4, chars = 280 } = {}) {
  const all = whole.split('\n');
  let shown = all.slice(0, lines).join('\n');
  if (shown.length > chars) shown = shown.slice(0, chars);
  return { text: shown, cut: shown.length < whole.length, lines: all.length };
}

/** A patch's lines with what each is: an added or removed line, a file or hunk header, or context. */
export function patchLines(patch) {
  return patch.split('\n').map((line) => ({
    line,
    kind: /^\*\*\* |^@@/.test(line) ? 'head' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'same',
  }));
}
