export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A tiny HTTP client for tests: JSON in, JSON out, status and headers kept. */
export function apiClient(baseUrl: string) {
  async function call<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* leave as text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    call,
    /** Creates an account; returns its device id, API key and ids. */
    async newAccount(body: Record<string, unknown> = {}) {
      const r = await call('POST', '/accounts', { body });
      if (r.status !== 200) throw new Error(`account creation failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as {
        account_id: string;
        device_id: string;
        agent_id: string;
        api_key: string;
        webhook_secret: string;
      };
    },
    agent: (apiKey: string) => ({
      post: (path: string, body?: unknown) => call('POST', path, { body, headers: { 'x-api-key': apiKey } }),
      get: (path: string) => call('GET', path, { headers: { 'x-api-key': apiKey } }),
    }),
    device: (deviceId: string) => ({
      post: (path: string, body?: unknown) => call('POST', path, { body, headers: { 'x-device-id': deviceId } }),
      get: (path: string) => call('GET', path, { headers: { 'x-device-id': deviceId } }),
      put: (path: string, body?: unknown) => call('PUT', path, { body, headers: { 'x-device-id': deviceId } }),
      delete: (path: string) => call('DELETE', path, { headers: { 'x-device-id': deviceId } }),
    }),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;
