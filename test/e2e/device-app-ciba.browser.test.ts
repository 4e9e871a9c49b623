import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { PHONE, axeAudit, launchBrowser, noBrowser, screenshot, signIn, collectProblems } from '../harness/browser.js';

// An OpenID CIBA request in the device app, in a real browser (headless Chromium): the pending request shows the
// binding message beside its title, and the Agents page shows each agent as a CIBA client whose ping endpoint the
// holder sets and clears. Screenshots go to test-artifacts/device-app/ciba-*.png.

const WAIT = 30_000;

describe.skipIf(noBrowser)(
  `device app: CIBA requests and clients${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
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
    const problems: string[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app-ciba' });
      origin = new URL(stack.baseUrl).origin;
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      const details = [
        {
          type: 'agent_action',
          action_type: 'purchase',
          title: 'Renew the team licence',
          amount: 480,
          currency: 'EUR',
          recipient: 'JetBrains s.r.o.',
          risk_level: 'high',
        },
      ];
      const res = await fetch(`${origin}/oauth/bc-authorize`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${acct.agent_id}:${acct.api_key}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          scope: 'openid',
          binding_message: 'LIC-4821',
          authorization_details: JSON.stringify(details),
        }).toString(),
      });
      expect(res.status).toBe(200);
      ({ browser, close: closeBrowser } = await launchBrowser());
      page = await browser.newPage();
      await page.setViewport(PHONE);
      collectProblems(page, problems, { consoleErrors: false });
      await signIn(page, { origin, deviceId: acct.device_id, timeoutMs: WAIT });
    }, 180_000);

    afterAll(async () => {
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('shows a CIBA request with its binding message beside the title', async () => {
      await page.waitForSelector('#pending-list .binding-message', { timeout: WAIT });
      const card = await page.$eval('#pending-list', (n) => n.textContent ?? '');
      expect(card).toContain('Renew the team licence');
      expect(card).toContain('The app shows: LIC-4821');
      const audit = await axeAudit(page);
      expect(audit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      await screenshot(page, 'ciba-request');
    });

    it('shows each agent as a CIBA client, and sets and clears its ping endpoint', async () => {
      await page.goto(`${origin}/app/#/agents`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('#ciba-clients:not([hidden]) #ciba-client-list li', { timeout: WAIT });
      const listed = await page.$eval('#ciba-client-list', (n) => n.textContent ?? '');
      expect(listed).toContain(acct.agent_id);
      expect(listed).toContain('none (polls)');
      const endpoint = 'https://agent.example/ciba/ping';
      await page.locator('#ciba-client-list input[name="endpoint"]').fill(endpoint);
      await page.locator('#ciba-client-list button[type=submit]').click();
      await page.waitForFunction(
        (url) => document.getElementById('ciba-client-list')!.textContent!.includes(`poll or ping`) && url,
        { timeout: WAIT },
        endpoint,
      );
      const client = await api.device(acct.device_id).get(`/agents/${acct.agent_id}/ciba-client`);
      expect(client.body.backchannel_client_notification_endpoint).toBe(endpoint);
      const audit = await axeAudit(page);
      expect(audit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      await page.evaluate(() => window.scrollTo(0, 0)); // the save scrolled; the sticky header would cover the top
      await screenshot(page, 'ciba-client');

      await page.locator('#ciba-client-list button[type=button]').click();
      await page.waitForFunction(
        () => document.getElementById('ciba-client-list')!.textContent!.includes('none (polls)'),
        { timeout: WAIT },
      );
      const cleared = await api.device(acct.device_id).get(`/agents/${acct.agent_id}/ciba-client`);
      expect(cleared.body.backchannel_client_notification_endpoint).toBeNull();
      expect(problems).toEqual([]);
    });
  },
);
