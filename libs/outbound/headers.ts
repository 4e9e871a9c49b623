/** Headers that describe one connection, not the message (RFC 9110 7.6.1); never forwarded either way. */
export const hopByHopHeaders = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Removes hop-by-hop headers, including any the Connection header itself names. */
export function dropHopByHop(headers: Record<string, string>): Record<string, string> {
  const named = new Set(
    Object.entries(headers)
      .filter(([k]) => k.toLowerCase() === 'connection')
      .flatMap(([, v]) => v.split(',').map((t) => t.trim().toLowerCase())),
  );
  return Object.fromEntries(
    Object.entries(headers).filter(([k]) => !hopByHopHeaders.has(k.toLowerCase()) && !named.has(k.toLowerCase())),
  );
}

/** Flattens undici's response headers to one string per name (repeated values joined by ", "). */
export function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
