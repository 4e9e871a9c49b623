import { z } from 'zod';

/** A string Postgres can store as text: no NUL characters (which it refuses). */
export const StoredText = () => z.string().refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

/** One sentence naming the offending field and what is wrong with it, for a 400 detail. */
export function describeZodError(error: z.ZodError, root = 'body', input?: unknown): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid ${root}`;
  const field = issue.path.length ? fieldPath(issue.path) : root;
  let message = issue.message;
  if (
    (issue.code === 'invalid_type' && /received undefined/.test(message)) ||
    (input !== undefined &&
      valueAt(input, issue.path) === undefined &&
      issue.path.length > 0 &&
      issue.code !== 'custom')
  )
    message = 'is required';
  else if (issue.code === 'unrecognized_keys')
    message = `has unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  else message = message.charAt(0).toLowerCase() + message.slice(1);
  return `${field}: ${message}`;
}

/** A field's path as a detail names it: `conditions[2].op` (list positions in brackets, keys after dots). */
function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join('');
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Most levels of nesting a JSON body may have; checked before any recursive work on it. */
export const MAX_JSON_DEPTH = 32;

/** A body path as an error names it: its first four keys, and an ellipsis when there are more. */
const shownPath = (path: string[]) => path.slice(0, 4).join('.') + (path.length > 4 ? '…' : '');

/**
 * The path of the first value nested deeper than `max` levels (an object or array at the top is level 1), or
 * null. Iterative, so a hostile depth cannot overflow the stack; the path shows the first few keys only.
 */
export function tooDeepPath(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const stack: Array<{ value: unknown; depth: number; path: string[] }> = [{ value, depth: 0, path: [] }];
  while (stack.length) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > max) return shownPath(item.path);
    for (const [key, child] of Object.entries(item.value)) {
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, depth, path: item.path.length < 5 ? [...item.path, key] : item.path });
    }
  }
  return null;
}

// With the u flag a surrogate pair is one code point, so this matches only a surrogate without its other half.
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;
const UNPAIRED_SURROGATES = new RegExp(UNPAIRED_SURROGATE.source, 'gu');
// JSON text can only carry a lone surrogate as a \uD8xx-\uDFxx escape (raw bytes that are not UTF-8 arrive as U+FFFD).
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The path of the first string (or key) of a parsed JSON body holding an unpaired UTF-16 surrogate, or null. Such a
 * string is not Unicode text: Postgres refuses it in JSON and text. `text` is the body as received; only a body that
 * escapes a surrogate is walked.
 */
export function unpairedSurrogatePath(text: string, value: unknown): string | null {
  if (!SURROGATE_ESCAPE.test(text)) return null;
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  // The path as text that is itself Unicode: a key's lone surrogate is shown as its escape.
  const shown = (path: string[]) =>
    (shownPath(path) || 'body').replace(UNPAIRED_SURROGATES, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item.value === 'string' && UNPAIRED_SURROGATE.test(item.value)) return shown(item.path);
    if (item.value === null || typeof item.value !== 'object') continue;
    for (const [key, child] of Object.entries(item.value)) {
      const path = [...item.path, key];
      if (UNPAIRED_SURROGATE.test(key)) return shown(path);
      stack.push({ value: child, path });
    }
  }
  return null;
}
