// The device's calls to the API (same origin, /api/v1), authenticated by its device id.

/** An API answer that was not a success: the status and the service's detail. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

/** The service could not be reached at all (offline, or the network failed): nothing was answered. */
export class NetworkError extends Error {}

async function reach(url, init) {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new NetworkError('The service cannot be reached: you seem to be offline.');
  }
}

/** A call without a device (joining with an invite, redeeming a sign-in's ticket): its JSON answer, or ApiError. */
export async function publicCall(method, path, body) {
  const res = await reach(path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : {};
  if (!res.ok) throw new ApiError(res.status, parsed.detail ?? `HTTP ${res.status}`);
  return parsed;
}

/** A client for one device id; onReach(true|false) hears whether the service answered. */
export function deviceApi(deviceId, base = '/api/v1', onReach = () => {}) {
  async function call(method, path, body) {
    const headers = { 'x-device-id': deviceId };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await reach(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      if (err instanceof NetworkError) onReach(false);
      throw err;
    }
    onReach(true);
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : {};
    if (!res.ok) throw new ApiError(res.status, parsed.detail ?? `HTTP ${res.status}`);
    return parsed;
  }

  /** Reads the server-sent event stream of the account, calling onEvent for each event until the signal aborts. */
  async function streamEvents(onEvent, signal) {
    const res = await reach(`${base}/device/events`, { headers: { 'x-device-id': deviceId }, signal }).catch((err) => {
      if (err instanceof NetworkError) onReach(false);
      throw err;
    });
    if (!res.ok || !res.body) throw new ApiError(res.status, 'event stream refused');
    onReach(true);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = frame
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data) onEvent(JSON.parse(data));
      }
    }
  }

  return {
    get: (path) => call('GET', path),
    post: (path, body = {}) => call('POST', path, body),
    put: (path, body) => call('PUT', path, body),
    patch: (path, body) => call('PATCH', path, body),
    delete: (path, body) => call('DELETE', path, body),
    streamEvents,
  };
}
