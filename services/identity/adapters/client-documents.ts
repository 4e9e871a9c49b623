import { errors } from '@agent-auth/errors';
import type { OutboundClient } from '@agent-auth/outbound';

/** A client ID metadata document is a few hundred bytes; anything much larger is refused. */
export const MAX_DOCUMENT_BYTES = 16 * 1024;

/** Fetches client ID metadata documents (JSON at the client_id URL) through the outbound client's rules. */
export interface ClientDocuments {
  fetch(url: string): Promise<unknown>;
}

export function clientDocumentsOver(outbound: Pick<OutboundClient, 'request'>): ClientDocuments {
  return {
    async fetch(url) {
      const unavailable = (why: string) =>
        errors.oauthInvalidClient(`The client ID metadata document at ${url} could not be read: ${why}`);
      let response: Awaited<ReturnType<OutboundClient['request']>>;
      try {
        response = await outbound.request({ url, method: 'GET', headers: { accept: 'application/json' } });
      } catch (err) {
        throw unavailable((err as { detail?: string }).detail ?? 'the request failed');
      }
      if (response.statusCode !== 200) throw unavailable(`it answered ${response.statusCode}`);
      try {
        return JSON.parse(response.body.toString('utf8'));
      } catch {
        throw unavailable('it is not JSON');
      }
    },
  };
}
