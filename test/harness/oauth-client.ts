// An MCP client that connects with OAuth through the official SDK's own support (OAuthClientProvider, auth()), and
// the holder's part played by the test: following the authorization URL to the consent page and answering it as a
// device of the account, as the device app does.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

/** An in-memory OAuthClientProvider: what a real client keeps in its settings, kept in fields. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** Where the SDK sent the user to authorize; the test follows it. */
  authorizationUrl: URL | undefined;
  /** Every token set the SDK saved, in order (a refresh adds one). */
  readonly history: OAuthTokens[] = [];

  constructor(
    readonly redirectUrl: string,
    private readonly metadata: Partial<OAuthClientMetadata> = {},
    readonly clientMetadataUrl?: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'E2E MCP client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }
  state() {
    return 'state-of-the-e2e-client';
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
    this.history.push(tokens);
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The consent page's request id that GET /oauth/authorize redirects the browser to. */
export async function consentRequestOf(authorizationUrl: URL): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = res.headers.get('location') ?? '';
  const match = /#\/connect\?request=([^&]+)$/.exec(location);
  if (res.status !== 302 || !match) throw new Error(`authorize answered ${res.status} to ${location}`);
  return decodeURIComponent(match[1]!);
}

export interface Holder {
  /** The device's API base URL (…/api/v1) and its device id. */
  baseUrl: string;
  deviceId: string;
}

/** The holder's answer, as the device app sends it; resolves to the redirect the browser then follows. */
export async function consent(
  holder: Holder,
  body: { request: string; allow: boolean; agent_id?: string; agent_name?: string },
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${holder.baseUrl}/oauth/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-device-id': holder.deviceId },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * The whole flow with the SDK: connect (401, discovery, registration, redirect), the holder allows as the named
 * agent, the SDK exchanges the code; resolves to a connected client and the provider holding its tokens.
 */
export async function connectWithOAuth(input: {
  mcpUrl: string;
  holder: Holder;
  agent: { agent_id: string } | { agent_name: string };
  provider?: MemoryOAuthProvider;
}): Promise<{ client: Client; provider: MemoryOAuthProvider; redirect: URL }> {
  const provider = input.provider ?? new MemoryOAuthProvider('http://127.0.0.1:53682/callback');
  const first = new StreamableHTTPClientTransport(new URL(input.mcpUrl), { authProvider: provider });
  const refused = await new Client({ name: 'e2e-oauth', version: '0.0.0' }).connect(first).catch((err) => err);
  if (!(refused instanceof UnauthorizedError)) throw new Error(`expected a redirect to authorize, got ${refused}`);
  const request = await consentRequestOf(provider.authorizationUrl!);
  const answer = await consent(input.holder, { request, allow: true, ...input.agent });
  if (answer.status !== 200) throw new Error(`consent failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  const redirect = new URL(answer.body.redirect_to);
  await first.finishAuth(redirect.searchParams.get('code')!);
  const client = new Client({ name: 'e2e-oauth', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(input.mcpUrl), { authProvider: provider }));
  return { client, provider, redirect };
}
