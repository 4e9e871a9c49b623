import { z } from 'zod';

/** A string Postgres can store as text: no NUL characters (which it refuses). */
export const StoredText = () => z.string().refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

/** One sentence naming the offending field and what is wrong with it, for a 400 detail. */
export function describeZodError(error: z.ZodError, root = 'body', input?: unknown): string {
  const issue = error.issues[0];
  if (!issue) return `Invalid ${root}`;
  const field = issue.path.length ? issue.path.map(String).join('.') : root;
  let message = issue.message;
  if ((issue.code === 'invalid_type' && /received undefined/.test(message)) || (input !== undefined && valueAt(input, issue.path) === undefined && issue.path.length > 0 && issue.code !== 'custom')) message = 'is required';
  else if (issue.code === 'unrecognized_keys') message = `has unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  else message = message.charAt(0).toLowerCase() + message.slice(1);
  return `${field}: ${message}`;
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
