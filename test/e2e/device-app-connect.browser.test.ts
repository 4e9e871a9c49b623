import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { MemoryOAuthProvider } from '../harness/oauth-client.js';
import { startStack, type Stack } from '../harness/stack.js';
import { PHONE, axeAudit, launchBrowser, noBrowser, screenshot, signIn, collectProblems } from '../harness/browser.js';

// Connecting an MCP client with OAuth through the device app, in a real browser (headless Chromium): the SDK client
// sends the holder to /oauth/authorize, which opens the app's consent page; the holder allows it as a new agent and
// the browser goes to the client's redirect URI with the code; the app's Agents page lists the connected app and
// disconnects it. Screenshots go to test-artifacts/device-app/.

const WAIT = 30_000;
const REDIRECT = 'http://127.0.0.1:53682/callback';

describe.skipIf(noBrowser)(
  `device app: connecting an MCP client${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  { timeout: 120_000 },
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let page: Page;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    /** Where the browser was sent outside the app (the client's redirect URI), answered here instead. */
    const leftFor: string[] = [];
    const problems: string[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app-connect' });
      origin = new URL(stack.baseUrl).origin;
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      ({ browser, close: closeBrowser } = await launchBrowser());
      page = await browser.newPage();
      await page.setViewport(PHONE);
      collectProblems(page, problems, { consoleErrors: false });
      await page.setRequestInterception(true);
      page.on('request', (request: HTTPRequest) => {
        if (!request.url().startsWith(REDIRECT)) return void request.continue();
        leftFor.push(request.url());
        void request.respond({ status: 200, contentType: 'text/plain', body: 'back in the client' });
      });
      await signIn(page, { origin, deviceId: acct.device_id, timeoutMs: WAIT });
    }, 180_000);

    afterAll(async () => {
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('shows who asks and where the answer goes, and allowing as a new agent sends the code back to the client', async () => {
      const provider = new MemoryOAuthProvider(REDIRECT, { client_name: 'Claude (browser test)' });
      const first = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
      await new Client({ name: 'browser-test', version: '0' }).connect(first).catch(() => undefined);
      expect(provider.authorizationUrl).toBeDefined();

      await page.goto(provider.authorizationUrl!.href, { waitUntil: 'networkidle2' });
      expect(page.url()).toMatch(/\/app\/#\/connect\?request=oar_/);
      await page.waitForSelector('#connect form.consent', { timeout: WAIT });
      const text = await page.$eval('#connect', (n) => n.textContent ?? '');
      expect(text).toContain('Claude (browser test)');
      expect(text).toContain('127.0.0.1:53682');
      const audit = await axeAudit(page);
      expect(audit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      await screenshot(page, 'connect-consent');

      const name = await page.$('#connect input[name="connect-agent-name"]');
      await name!.click({ count: 3 });
      await name!.type('Claude on my laptop');
      await page.locator('#connect button[type=submit]').click();
      await page.waitForFunction(() => location.href.startsWith('http://127.0.0.1:53682/'), { timeout: WAIT });
      const back = new URL(leftFor.at(-1)!);
      expect(back.searchParams.get('state')).toBe('state-of-the-e2e-client');
      await first.finishAuth(back.searchParams.get('code')!);
      const client = new Client({ name: 'browser-test', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider }));
      expect((await client.listTools()).tools).toHaveLength(8);
      await client.close();
      const agents = (await api.device(acct.device_id).get('/agents')).body.agents as Array<{ name: string }>;
      expect(agents.map((a) => a.name)).toContain('Claude on my laptop');
      expect(problems).toEqual([]);
    });

    it('lists the connected app under Agents, and Disconnect ends it at once', async () => {
      await page.goto(`${origin}/app/#/agents`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('#connections:not([hidden]) #connection-list li button', { timeout: WAIT });
      const listed = await page.$eval('#connection-list', (n) => n.textContent ?? '');
      expect(listed).toMatch(/Claude \(browser test\) as Claude on my laptop, connected/);
      await screenshot(page, 'connected-apps');
      await page.locator('#connection-list li button').click();
      await page.waitForFunction(
        () => /No connected apps/.test(document.getElementById('connection-list')!.textContent!),
        {
          timeout: WAIT,
        },
      );
      expect((await api.device(acct.device_id).get('/oauth/connections')).body.connections).toEqual([]);
    });
  },
);
