// The action request a held tool call becomes: what the holder reads on the phone, within the service's limits.
import { canonicalSha256, type Action, type ActionRequestInput } from '@agent-auth/client';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

// The service's limits on a request: title 200 characters, description 2000, metadata 8192 bytes of JSON.
const TITLE_MAX = 200;
const DESCRIPTION_MAX = 2000;
const METADATA_MAX_BYTES = 8192;
const NAME_MAX = 200;
const KEY_ARGUMENT_MAX = 100;
const TOOL_DESCRIPTION_MAX = 400;
// A preview longer than this is no easier to check on a phone than the digest.
const PREVIEW_MAX_CHARS = 4000;

// Argument names that say at a glance what a call acts on, the most telling first.
const KEY_ARGUMENT_NAMES = [
  'path',
  'file_path',
  'filepath',
  'filename',
  'file',
  'paths',
  'source',
  'uri',
  'url',
  'command',
  'cmd',
  'query',
  'q',
  'to',
  'recipient',
  'name',
  'title',
  'id',
];

/** A tool call the gate holds, and what it knows about the server and the tool. */
export interface GatedCall {
  /** The wrapped server's name: its initialize result's serverInfo.name, else its command. */
  server: string;
  toolName: string;
  /** The tool as the server lists it; undefined when the server did not list it. */
  tool?: Pick<Tool, 'annotations' | 'description' | 'title'>;
  arguments: Record<string, unknown>;
  /** How long the holder may take: the request's expires_in_seconds (30 to 3600). */
  expiresInSeconds: number;
}

/** How the arguments appear in the request's metadata: in full, or as a digest and a preview when too large. */
interface ShownArguments {
  metadata: Record<string, unknown>;
  /** Set when the arguments did not fit: their SHA-256, size and how much of them the preview shows. */
  digest?: { sha256: string; bytes: number; previewChars: number };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a title line must not carry
const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f]+/g;

/** One line of text without control characters (the service refuses NUL), at most `max` characters. */
function line(text: string, max: number): string {
  const flat = text.replace(CONTROL_OR_SPACE, ' ').trim();
  return flat.length <= max ? flat : `${prefix(flat, max - 1)}…`;
}

/** A prefix of `text` of at most `n` UTF-16 units that does not split a surrogate pair. */
function prefix(text: string, n: number): string {
  const cut = text.slice(0, n);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The argument that says what the call acts on (a path, a URL, a command…), as text; null when none does. */
export function keyArgument(args: Record<string, unknown>): string | null {
  const shown = (value: unknown): string | null => {
    if (typeof value === 'string') return value.trim() || null;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return value.join(', ');
    return null;
  };
  for (const name of KEY_ARGUMENT_NAMES) {
    const value = shown(args[name]);
    if (value) return value;
  }
  for (const [name, value] of Object.entries(args)) {
    const text = shown(value);
    if (text) return `${name}=${text}`;
  }
  return null;
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of the arguments: what a truncated request asks the holder about. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return canonicalSha256(args);
}

/** The metadata of the request: the arguments in full when they fit the service's limit, else digest + preview. */
function showArguments(call: GatedCall): ShownArguments {
  const base = { source: 'mcp', server: line(call.server, NAME_MAX), tool_name: line(call.toolName, NAME_MAX) };
  const full = { ...base, arguments: call.arguments };
  if (jsonBytes(full) <= METADATA_MAX_BYTES) return { metadata: full };
  const json = JSON.stringify(call.arguments);
  const sha256 = argumentsDigest(call.arguments);
  const bytes = Buffer.byteLength(json);
  const around = { ...base, arguments_sha256: sha256, arguments_bytes: bytes, arguments_truncated: true };
  const budget = METADATA_MAX_BYTES - jsonBytes({ ...around, arguments_preview: '' });
  let preview = prefix(json, Math.min(PREVIEW_MAX_CHARS, budget));
  // Escaping and multi-byte characters make the preview's JSON longer than its characters: shrink until it fits.
  while (jsonBytes(preview) - 2 > budget)
    preview = prefix(preview, Math.floor((preview.length * budget) / jsonBytes(preview)));
  return {
    metadata: { ...around, arguments_preview: preview },
    digest: { sha256, bytes, previewChars: preview.length },
  };
}

function titleOf(call: GatedCall, truncated: boolean): string {
  const key = keyArgument(call.arguments);
  const head = `MCP ${line(call.server, 60)}: ${line(call.toolName, 60)}`;
  const tail = truncated ? ' (large arguments)' : '';
  return line(`${head}${key ? ` ${line(key, KEY_ARGUMENT_MAX)}` : ''}`, TITLE_MAX - tail.length) + tail;
}

/** What the tool's annotations say it does, in words. */
function hints(call: GatedCall): string {
  const a = call.tool?.annotations;
  if (!call.tool) return 'The server did not list this tool, so nothing is known about what it does.';
  const said: string[] = [];
  if (a?.readOnlyHint === true) said.push('only reads');
  if (a?.destructiveHint === true) said.push('may delete or overwrite data');
  if (a?.openWorldHint === true) said.push('reaches outside systems');
  return said.length ? `The server says the tool ${said.join(', ')}.` : '';
}

function descriptionOf(call: GatedCall, shown: ShownArguments): string {
  const what = call.tool?.description ? ` (${line(call.tool.description, TOOL_DESCRIPTION_MAX)})` : '';
  const parts = [
    `The MCP server "${line(call.server, NAME_MAX)}" is asked to run its tool ${line(call.toolName, NAME_MAX)}${what}.`,
  ];
  const said = hints(call);
  if (said) parts.push(said);
  if (shown.digest)
    parts.push(
      `The arguments are ${shown.digest.bytes} bytes of JSON, too large to show in full: arguments_preview holds their first ${shown.digest.previewChars} characters and arguments_sha256 the SHA-256 of all of them; approving runs the tool once with exactly the arguments of that digest.`,
    );
  else parts.push('Approving runs the tool once with exactly the arguments shown.');
  return parts.join(' ').slice(0, DESCRIPTION_MAX);
}

/**
 * The action request for a held call: action_type `data_access` for a tool annotated read-only (held under
 * `--ask all`), else `system`; risk `high` for a tool annotated `destructiveHint: true` (and not reversible), else
 * `medium`.
 */
export function buildActionRequest(call: GatedCall): ActionRequestInput {
  const annotations = call.tool?.annotations;
  const destructive = annotations?.destructiveHint === true;
  const shown = showArguments(call);
  return {
    action_type: annotations?.readOnlyHint === true ? 'data_access' : 'system',
    title: titleOf(call, shown.digest !== undefined),
    description: descriptionOf(call, shown),
    risk_level: destructive ? 'high' : 'medium',
    ...(destructive ? { reversible: false } : {}),
    metadata: shown.metadata,
    expires_in_seconds: call.expiresInSeconds,
  };
}

/**
 * The arguments an approved call runs with: the holder's edited input when the service returns one
 * (`updated_input`), else the call's own arguments, once the approved request is shown to carry exactly them (in
 * full, or by digest). Null when the approved request is about other arguments: the call must not run.
 */
export function approvedArguments(
  approved: Pick<Action, 'metadata'> & { updated_input?: Record<string, unknown> },
  args: Record<string, unknown>,
): Record<string, unknown> | null {
  if (approved.updated_input && typeof approved.updated_input === 'object') return approved.updated_input;
  const meta = approved.metadata ?? {};
  const digest = argumentsDigest(args);
  if ('arguments' in meta) return canonicalSha256(meta.arguments) === digest ? args : null;
  return meta.arguments_sha256 === digest ? args : null;
}
