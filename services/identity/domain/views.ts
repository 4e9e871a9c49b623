import type { AuthorizationView, ClientMetadata, ConnectionView } from '@agent-auth/contracts';
import type { AuthorizationRow, ClientRow, ConnectionRow } from './rows.js';

/** What the holder is shown as the client's name: its own, else the host it sends the answer to. */
export function clientNameOf(metadata: ClientMetadata, redirectUri: string): string {
  return metadata.client_name ?? hostOf(redirectUri);
}

/** The host of a redirect URI (an app's own scheme has none: then the scheme itself). */
export function hostOf(uri: string): string {
  const url = new URL(uri);
  return url.host || url.protocol.replace(/:$/, '');
}

export function authorizationViewOf(row: AuthorizationRow, client: ClientRow): AuthorizationView {
  return {
    request_id: row.id,
    client_id: row.client_id,
    client_name: clientNameOf(client.metadata, row.redirect_uri),
    client_uri: client.metadata.client_uri,
    client_kind: client.from_document ? 'metadata_document' : 'registered',
    redirect_uri: row.redirect_uri,
    redirect_host: hostOf(row.redirect_uri),
    resource: row.resource,
    scope: row.scope,
    expires_at: row.expires_at.toISOString(),
  };
}

export function connectionViewOf(row: ConnectionRow, client: ClientRow | undefined): ConnectionView {
  const metadata = client?.metadata;
  return {
    connection_id: row.id,
    client_id: row.client_id,
    client_name: metadata ? clientNameOf(metadata, metadata.redirect_uris[0]!) : row.client_id,
    agent_id: row.agent_id,
    resource: row.resource,
    scope: row.scope,
    created_at: row.created_at.toISOString(),
    refreshed_at: row.refreshed_at?.toISOString() ?? null,
  };
}
