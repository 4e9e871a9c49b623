import type { ClientMetadata } from '@agent-auth/contracts';

/** An OAuth client: registered here (with a secret's hash when confidential) or known by its metadata document. */
export interface ClientRow {
  client_id: string;
  secret_hash: string | null;
  metadata: ClientMetadata;
  from_document: boolean;
  /** A document's: when it was fetched (it is fetched again once old). */
  fetched_at: Date | null;
  created_at: Date;
}

/** An authorization request: asked by a client, answered by the holder on a device, then its code used once. */
export interface AuthorizationRow {
  id: string;
  client_id: string;
  redirect_uri: string;
  /** Whether the request named its redirect URI: the token request must then name the same one. */
  redirect_uri_given: boolean;
  code_challenge: string;
  state: string | null;
  scope: string | null;
  resource: string;
  issuer: string;
  /** Until when the holder may answer. */
  expires_at: Date;
  decided_at: Date | null;
  account_id: string | null;
  agent_id: string | null;
  /** The device whose holder answered. */
  decided_by: string | null;
  code_hash: string | null;
  code_expires_at: Date | null;
  code_used_at: Date | null;
  /** The connection its code was exchanged for. */
  connection_id: string | null;
  created_at: Date;
}

/** A connection: one consent of the holder, the agent its client acts as, and the family of its tokens. */
export interface ConnectionRow {
  id: string;
  account_id: string;
  agent_id: string;
  client_id: string;
  resource: string;
  scope: string | null;
  /** The device whose holder consented (the account's agents are read as it). */
  consented_by: string;
  created_at: Date;
  refreshed_at: Date | null;
  revoked_at: Date | null;
}
