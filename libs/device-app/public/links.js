// Links into the app: `/app/#/requests/{id}` opens one request (the MCP server hands agents this link; a push
// notification opens it); `/app/#/connect?request={id}` the consent page of an MCP client connecting with OAuth. Pure functions, so they run in the browser and in tests alike.

/** The request id a location hash names (`#/requests/{id}`), or null. */
export function requestIdFromHash(hash) {
  const match = /^#\/requests\/([A-Za-z0-9_-]{1,100})$/.exec(hash ?? '');
  return match ? match[1] : null;
}

/** The authorization request a location hash names (`#/connect?request={id}`, where /oauth/authorize sends the holder), or null. */
export function connectRequestFromHash(hash) {
  const match = /^#\/connect\?request=([A-Za-z0-9_-]{1,100})$/.exec(hash ?? '');
  return match ? match[1] : null;
}

/** The pending requests with the linked one moved first; `found` is false when it is no longer waiting. */
export function linkedFirst(requests, id) {
  const at = id ? requests.findIndex((r) => r.id === id) : -1;
  if (at < 0) return { requests, found: false };
  return { requests: [requests[at], ...requests.slice(0, at), ...requests.slice(at + 1)], found: true };
}
