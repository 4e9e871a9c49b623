import type { ClientCredentials, ClientRegistration, RegisteredClient } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { documentMetadataOf, isMetadataDocumentUrl, registeredMetadataOf } from '../domain/client-metadata.js';
import type { ClientRow } from '../domain/rows.js';
import { matchesHash, newIdentityId, newSecret, secretHash } from '../domain/secrets.js';
import type { IdentityDeps } from './deps.js';

/** A metadata document fetched longer ago than this is fetched again when its client comes back. */
const DOCUMENT_FRESH_MS = 60 * 60 * 1000;

/** OAuth clients: registration (RFC 7591), client ID metadata documents, and client authentication. */
export function createClients(deps: Pick<IdentityDeps, 'clients' | 'documents' | 'settings'>) {
  const { clients, documents, settings } = deps;

  const fromDocument = async (clientId: string, known: ClientRow | undefined): Promise<ClientRow> => {
    if (known?.fetched_at && Date.now() - known.fetched_at.getTime() < DOCUMENT_FRESH_MS) return known;
    const metadata = documentMetadataOf(clientId, await documents.fetch(clientId));
    return clients.saveDocument(clientId, metadata);
  };

  return {
    async register(registration: ClientRegistration): Promise<RegisteredClient> {
      const metadata = registeredMetadataOf(registration);
      const secret = metadata.token_endpoint_auth_method === 'none' ? null : newSecret('clientSecret');
      const row = await clients.insert({
        client_id: newIdentityId('client'),
        secret_hash: secret === null ? null : secretHash(secret),
        metadata,
      });
      return {
        ...metadata,
        client_id: row.client_id,
        client_id_issued_at: Math.floor(row.created_at.getTime() / 1000),
        ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      };
    },

    /** A client by its id: registered here, or an https client_id whose metadata document is fetched (and kept). */
    async resolve(clientId: string): Promise<ClientRow> {
      const known = await clients.get(clientId);
      if (known && !known.from_document) return known;
      if (isMetadataDocumentUrl(clientId, settings.insecureHosts)) return fromDocument(clientId, known);
      throw errors.oauthInvalidClient('Unknown client_id: register the client first (POST /oauth/register)');
    },

    /** The client of a token or revocation request, its secret checked when it has one. */
    async authenticate(credentials: ClientCredentials): Promise<ClientRow> {
      const client = await this.resolve(credentials.client_id);
      if (client.secret_hash === null) return client;
      if (credentials.client_secret === null || !matchesHash(credentials.client_secret, client.secret_hash))
        throw errors.oauthInvalidClient('Client authentication failed: wrong or missing client_secret');
      return client;
    },
  };
}
export type Clients = ReturnType<typeof createClients>;
