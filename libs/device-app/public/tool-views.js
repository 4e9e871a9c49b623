// How a coding agent's tool call looks: the tool and its folder under the headline, the command or the change in
// full (scrollable, never cut without saying so), and the answers only a tool call has: allow for this session,
// approve with changes, deny with a note.
import { el, facts } from './dom.js';
import { GRANT_DURATIONS, requestHash } from './format.js';
import {
  MAX_DENY_NOTE,
  SESSION_GRANT_SECONDS,
  acceptsEdits,
  commandPrefix,
  editableOf,
  editedInputOf,
  patchLines,
  sessionGrantOf,
  shortened,
} from './tool-calls.js';

/** "Bash in /home/dev/demo": the tool and the folder it works in. */
export function toolWhere(call) {
  return el(
    'p',
    { className: 'tool-where' },
    el('span', { className: 'tool-name', textContent: call.tool }),
    call.cwd ? [' in ', el('code', { className: 'cwd', textContent: call.cwd })] : null,
  );
}

/**
 * What a card shows of the call beyond its title: a command the one-line title could not show as written (several
 * lines, or shortened), its first lines in a monospace block, and when that is not all of it, a link to the rest.
 */
export function toolPreview(item, call) {
  if (call.kind !== 'shell' || item.title === `Run: ${call.command}`) return null;
  const short = shortened(call.command);
  return [
    el('pre', { className: 'code command', textContent: short.text }),
    short.cut
      ? el(
          'p',
          { className: 'cut' },
          `Shortened here (${short.lines} ${short.lines === 1 ? 'line' : 'lines'} in all): `,
          el('a', { href: requestHash(item.id), textContent: 'read the whole command' }),
        )
      : null,
  ];
}

/** A block of code the holder reads in full: wrapped, scrollable when long, reachable by keyboard. */
function codeBlock(content, label, className = '') {
  return el('pre', {
    className: `code full ${className}`.trim(),
    tabIndex: 0,
    role: 'region',
    'aria-label': label,
    textContent: content,
  });
}

function section(level, title, ...content) {
  return el('section', { className: 'tool-input' }, el(level, { textContent: title }), ...content);
}

const lineCount = (text) => {
  const n = text.split('\n').length;
  return `${n} ${n === 1 ? 'line' : 'lines'}, ${new TextEncoder().encode(text).length} bytes`;
};

/** An edit's old text and what replaces it. */
function replacement(edit, n, of) {
  const which = of > 1 ? ` (${n} of ${of})` : '';
  return [
    el('p', { className: 'label', textContent: `Replace${which}${edit.replace_all ? ', every occurrence' : ''}` }),
    codeBlock(String(edit.old_string ?? ''), `Old text${which}`, 'del'),
    el('p', { className: 'label', textContent: 'with' }),
    codeBlock(String(edit.new_string ?? ''), `New text${which}`, 'add'),
  ];
}

/** A patch with its added and removed lines marked. */
function patchBlock(patch) {
  const block = el('pre', { className: 'code full patch', tabIndex: 0, role: 'region', 'aria-label': 'Patch' });
  for (const { line, kind } of patchLines(patch))
    block.append(el('span', { className: `line ${kind}`, textContent: `${line}\n` }));
  return block;
}

/** The tool input in full, as what it is: a command, an edit (old → new), a file's content, a patch, or JSON. */
function inputSection(call, level) {
  const { input } = call;
  if (call.truncated)
    return section(
      level,
      'Arguments (too large to show in full)',
      el('p', {
        className: 'cut',
        textContent: `The arguments are ${call.truncated.bytes} bytes of JSON. Here are their first ${call.truncated.preview.length} characters; approving runs the tool with exactly the arguments whose SHA-256 is ${call.truncated.sha256}.`,
      }),
      codeBlock(call.truncated.preview, 'Start of the arguments'),
    );
  switch (call.kind) {
    case 'shell':
      return section(
        level,
        'Command',
        codeBlock(call.command, 'Command', 'command'),
        typeof input.description === 'string'
          ? el('p', { className: 'muted', textContent: `The agent says: ${input.description}` })
          : null,
      );
    case 'edit':
      return section(level, `Change in ${call.file ?? 'the file'}`, ...replacement(input, 1, 1));
    case 'multi-edit':
      return section(
        level,
        `${input.edits.length} changes in ${call.file ?? 'the file'}`,
        ...input.edits.flatMap((edit, i) => replacement(edit ?? {}, i + 1, input.edits.length)),
      );
    case 'write':
      return section(
        level,
        `New content of ${call.file ?? 'the file'}`,
        el('p', { className: 'muted', textContent: `Replaces the whole file: ${lineCount(input.content)}.` }),
        codeBlock(input.content, 'File content'),
      );
    case 'patch':
      return section(level, 'Patch', patchBlock(editableOf(call).text));
    case 'notebook':
      return section(
        level,
        `New source of ${input.cell_id ? `cell ${input.cell_id}` : 'a cell'} in ${call.file ?? 'the notebook'}`,
        codeBlock(input.new_source, 'New cell source'),
      );
    default:
      return section(
        level,
        call.source === 'mcp' ? 'Arguments' : 'Tool input',
        codeBlock(JSON.stringify(input, null, 2), call.source === 'mcp' ? 'Arguments' : 'Tool input'),
      );
  }
}

/**
 * Everything about a tool call beyond its headline (which names the agent, the tool and its folder): its input in
 * full first, then the whole input as sent, then who asked in which session, when, and the hash it is bound by.
 */
export function toolFacts(item, call, level = 'h3') {
  const shownAsJson = call.kind === 'json' || call.truncated;
  return [
    call.source === 'mcp' && item.description
      ? el('p', { className: 'description', textContent: item.description })
      : null,
    inputSection(call, level),
    shownAsJson
      ? null
      : el(
          'details',
          { className: 'raw' },
          el('summary', { textContent: 'The whole tool input as sent (JSON)' }),
          codeBlock(JSON.stringify(call.input, null, 2), 'The whole tool input'),
        ),
    facts([
      ['Agent key', item.agent_name || item.agent_id],
      ['Session', call.sessionId],
      ['Asked', new Date(item.created_at).toLocaleString()],
      ['Expires', new Date(item.expires_at).toLocaleString()],
      ['Content hash', item.content_hash],
      ['Request id', item.id],
    ]),
  ];
}

/** One of the answers only a tool call has, folded away until the holder opens it; its state kept in `draft`. */
function choice(draft, key, summary, ...content) {
  const details = el(
    'details',
    { className: 'choice', open: !!draft.open?.[key], 'data-choice': key },
    el('summary', { textContent: summary }),
    ...content,
  );
  details.ontoggle = () => {
    draft.open = { ...draft.open, [key]: details.open };
  };
  return details;
}

/** A text field whose value lives in `draft[key]`, starting from `initial`. */
function kept(node, draft, key, initial) {
  node.value = draft[key] ?? initial;
  node.oninput = () => {
    draft[key] = node.value;
  };
  return node;
}

/** The error line of a choice: shown (and announced) when what the holder typed cannot be sent. */
function problem(id) {
  return el('p', { className: 'error', id, role: 'alert', hidden: true });
}

function showProblem(field, line, text) {
  line.textContent = text;
  line.hidden = false;
  field.setAttribute('aria-invalid', 'true');
  field.setAttribute('aria-describedby', line.id);
  field.focus();
}

function submit(text, className, label) {
  const button = el('button', { type: 'button', className, textContent: text, 'aria-label': label });
  return { button, row: el('div', { className: 'actions' }, button) };
}

/** "Allow for this session…": approve, and let the same tool (a command with the same start) run in this session. */
function sessionChoice(item, call, draft, onDecide) {
  const shell = call.kind === 'shell';
  const hintId = `prefix-hint-${item.id}`;
  const prefix = shell
    ? kept(
        el('input', {
          name: 'command_prefix',
          className: 'mono',
          autocapitalize: 'off',
          autocomplete: 'off',
          spellcheck: false,
          maxLength: 500,
          'aria-describedby': hintId,
        }),
        draft,
        'prefix',
        commandPrefix(call.command),
      )
    : null;
  const duration = kept(
    el(
      'select',
      { name: 'session_duration' },
      ...GRANT_DURATIONS.map(([seconds, text]) => el('option', { value: String(seconds), textContent: text })),
    ),
    draft,
    'duration',
    String(SESSION_GRANT_SECONDS),
  );
  duration.onchange = duration.oninput;
  const where = call.sessionId ? 'in this session' : `from ${call.agent}`;
  const what = shell ? `run ${call.tool} commands that start the same way` : `use ${call.tool}`;
  // Without a session (the MCP gate names none) the grant is for the tool alone, and says so.
  const allow = call.sessionId ? 'Approve and allow for this session' : 'Approve and allow this tool';
  const { button, row } = submit(allow, 'approve', `${allow}: ${item.title}`);
  button.onclick = () =>
    onDecide(item, 'approve', button, {
      grant: sessionGrantOf(call, { prefix: prefix?.value ?? '', seconds: Number(duration.value) }),
    });
  return choice(
    draft,
    'session',
    call.sessionId ? 'Allow for this session…' : 'Allow this tool for a while…',
    el('p', {
      className: 'muted',
      textContent: `Approve this, and let ${call.agent} ${what} ${where} without asking, for the time you choose.`,
    }),
    el(
      'div',
      { className: 'grid' },
      prefix
        ? el(
            'div',
            {},
            el('label', {}, 'Commands starting with', prefix),
            el('p', { className: 'hint', id: hintId, textContent: `Left empty: any ${call.tool} command.` }),
          )
        : null,
      el('label', {}, 'For', duration),
    ),
    row,
  );
}

/** "Approve with changes…": the command (or the changed text, or the input as JSON) to edit, then approve. */
function editChoice(item, call, draft, onDecide) {
  const editable = editableOf(call);
  const lines = editable.text.split('\n').length;
  const field = kept(
    el('textarea', {
      name: 'updated_input',
      className: 'mono',
      rows: Math.min(12, Math.max(3, lines + 1)),
      autocapitalize: 'off',
      autocomplete: 'off',
      spellcheck: false,
    }),
    draft,
    'edit',
    editable.text,
  );
  const error = problem(`edit-error-${item.id}`);
  const { button, row } = submit('Approve with these changes', 'approve', `Approve with these changes: ${item.title}`);
  button.onclick = () => {
    const edited = editedInputOf(call, field.value);
    if (edited.error) return showProblem(field, error, edited.error);
    return onDecide(item, 'approve', button, { updated_input: edited.input });
  };
  return choice(
    draft,
    'edit',
    'Approve with changes…',
    el('p', {
      className: 'muted',
      textContent: `${call.agent} runs the tool with your version instead of its own.`,
    }),
    el('label', {}, editable.label, field),
    error,
    row,
  );
}

/** "Deny with a note…": the note reaches the model as the reason, so it can do better. */
function denyChoice(item, draft, onDecide) {
  const counter = el('span', { className: 'muted counter', 'aria-live': 'polite' });
  const note = kept(el('textarea', { name: 'reason', rows: 3, maxLength: MAX_DENY_NOTE }), draft, 'note', '');
  const count = () => {
    counter.textContent = `${note.value.length} / ${MAX_DENY_NOTE}`;
  };
  const typed = note.oninput;
  note.oninput = () => {
    typed();
    count();
  };
  count();
  const error = problem(`deny-error-${item.id}`);
  const { button, row } = submit('Deny with this note', 'deny', `Deny with this note: ${item.title}`);
  button.onclick = () => {
    const reason = note.value.trim();
    if (!reason) return showProblem(note, error, 'Write a note first, or use Deny.');
    return onDecide(item, 'deny', button, { reason });
  };
  return choice(
    draft,
    'deny',
    'Deny with a note…',
    el('label', {}, 'Note for the agent (the model reads it)', note),
    counter,
    error,
    row,
  );
}

/** The tool call's own answers, below Approve and Deny: only those its client can act on. */
export function toolChoices(item, call, draft, onDecide) {
  return el(
    'div',
    { className: 'choices', role: 'group', 'aria-label': 'More ways to answer' },
    sessionChoice(item, call, draft, onDecide),
    acceptsEdits(item, call) ? editChoice(item, call, draft, onDecide) : null,
    denyChoice(item, draft, onDecide),
  );
}

/** On a card: where the tool call's other answers are. */
export function moreChoicesLink(item, call) {
  const edit = acceptsEdits(item, call) ? ', approve with changes' : '';
  return el(
    'p',
    { className: 'more' },
    el('a', {
      href: requestHash(item.id),
      textContent: 'More ways to answer',
      'aria-label': `More ways to answer (allow for this session${edit}, deny with a note): ${item.title}`,
    }),
  );
}
