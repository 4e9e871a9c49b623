import { createServer, type Server } from 'node:http';
import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the provider knows: the login typed on its page, and the claims it vouches for. */
export interface ProviderAccount {
  email: string;
  email_verified: boolean;
}

/** Claims of an ID token, as the provider issued them; a test's tamper returns the claims to sign instead. */
export type IdTokenClaims = Record<string, unknown>;

export interface TestOidcProvider {
  issuer: string;
  /**
   * Replaces the ID token of the next token answers: `craft` gets the claims the provider issued and returns those to
   * sign, and with which key (the provider's own, or another one); undefined to stop.
   */
  tamper(craft: ((claims: IdTokenClaims) => { claims: IdTokenClaims; foreignKey?: boolean }) | undefined): void;
  /** Every request path the provider served (discovery, keys, token…), in order. */
  served: string[];
  stop(): Promise<void>;
}

const KID = 'test-key-1';

function jwtOf(claims: IdTokenClaims, key: KeyObject): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signingInput = `${part({ alg: 'RS256', kid: KID, typ: 'JWT' })}.${part(claims)}`;
  return `${signingInput}.${sign('sha256', Buffer.from(signingInput), key).toString('base64url')}`;
}

/**
 * A real OpenID Connect provider (oidc-provider) on loopback: one confidential client, accounts by login, PKCE
 * required, its development login and consent pages (which a test fills in over plain HTTP), email claims in the ID
 * token. Its signing key is the test's, so a test can craft ID tokens the provider's key signs.
 */
export async function startOidcProvider(input: {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  accounts: Record<string, ProviderAccount>;
}): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreign = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: input.clientId,
        client_secret: input.clientSecret,
        redirect_uris: [input.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The email claims in the ID token itself, not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['a test provider cookie key'] },
    async findAccount(_ctx: unknown, id: string) {
      const account = input.accounts[id];
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
  });
  const served: string[] = [];
  let craft: Parameters<TestOidcProvider['tamper']>[0];
  provider.use(async (ctx: any, next: () => Promise<void>) => {
    served.push(ctx.path);
    await next();
    if (ctx.path !== '/token' || !craft || typeof ctx.body?.id_token !== 'string') return;
    const issued = JSON.parse(Buffer.from(ctx.body.id_token.split('.')[1], 'base64url').toString());
    const crafted = craft(issued);
    ctx.body = {
      ...ctx.body,
      id_token: jwtOf(crafted.claims, crafted.foreignKey ? foreign : createPrivateKey({ key: jwk, format: 'jwk' })),
    };
  });
  server.on('request', provider.callback());
  return {
    issuer,
    served,
    tamper(next) {
      craft = next;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One browser's cookies, by host (enough for loopback servers on distinct ports). */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  header(url: URL): string {
    return [...(this.byHost.get(url.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  keep(url: URL, headers: Headers): void {
    const jar = this.byHost.get(url.host) ?? new Map<string, string>();
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
    this.byHost.set(url.host, jar);
  }
}

/** Where the browser ended: the device app's URL (its fragment the sign-in's outcome), or a page it stopped at. */
export interface BrowserEnd {
  url: URL;
  status: number;
  /** The fragment's parameters when the browser came back to the device app's #/signin. */
  fragment?: URLSearchParams;
}

/**
 * Drives a sign-in as a browser does, over HTTP: follows redirects with the browser's cookies, fills in the
 * provider's login form (the login given) and its consent form, and stops at the device app (or `stopAt`'s URL).
 */
export async function browse(input: {
  start: string;
  login: string;
  jar?: CookieJar;
  stopAt?: (url: URL) => boolean;
}): Promise<BrowserEnd> {
  const jar = input.jar ?? new CookieJar();
  let url = new URL(input.start);
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (input.stopAt?.(url)) return { url, status: 0 };
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      body,
      headers: {
        cookie: jar.header(url),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
    });
    jar.keep(url, res.headers);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      method = 'GET';
      body = undefined;
      if (url.pathname.startsWith('/app/')) {
        const hash = url.hash.replace(/^#\/signin\??/, '');
        return { url, status: res.status, fragment: new URLSearchParams(hash) };
      }
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action || !prompt) return { url, status: res.status };
    url = new URL(action.replace(/&amp;/g, '&'), url);
    method = 'POST';
    body = new URLSearchParams(
      prompt === 'login' ? { prompt, login: input.login, password: 'any' } : { prompt },
    ).toString();
  }
  throw new Error(`the sign-in did not end after 20 hops (at ${url})`);
}
