import type { ClientMetadata } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import type { ClientRow } from '../domain/rows.js';

/** OAuth clients: registered ones, and the documents of those known by their client ID metadata document URL. */
export function createClientStore(sql: Sql) {
  return {
    async insert(row: { client_id: string; secret_hash: string | null; metadata: ClientMetadata }): Promise<ClientRow> {
      const [stored] = await sql<ClientRow[]>`
        insert into identity.oauth_clients (client_id, secret_hash, metadata)
        values (${row.client_id}, ${row.secret_hash}, ${sql.json(row.metadata)})
        returning *`;
      return stored!;
    },

    async get(clientId: string): Promise<ClientRow | undefined> {
      const [row] = await sql<ClientRow[]>`select * from identity.oauth_clients where client_id = ${clientId}`;
      return row;
    },

    /** Keeps a client's metadata document as fetched now (a registered client of that id is left alone). */
    async saveDocument(clientId: string, metadata: ClientMetadata): Promise<ClientRow> {
      const [row] = await sql<ClientRow[]>`
        insert into identity.oauth_clients (client_id, metadata, from_document, fetched_at)
        values (${clientId}, ${sql.json(metadata)}, true, now())
        on conflict (client_id) do update set metadata = excluded.metadata, fetched_at = now()
          where identity.oauth_clients.from_document
        returning *`;
      return row ?? (await this.get(clientId))!;
    },
  };
}
export type ClientStore = ReturnType<typeof createClientStore>;
