import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionEvent } from '@agent-auth/contracts';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import {
  ARTIFACTS,
  DESKTOP,
  PHONE,
  axeAudit,
  launchBrowser,
  noBrowser,
  screenshot,
  type AxeViolation,
  collectProblems,
} from '../harness/browser.js';
import { pushMessageOf } from '../../services/notifier/domain/push-messages.js';

// The device app in a real browser (headless Chromium): passkey set-up and approvals through the DevTools virtual
// authenticator, the installable PWA (manifest, icons, service worker, offline start), notifications that open
// their request and go away once it is settled, and an axe-core audit of every view. Screenshots go to
// test-artifacts/device-app/.

const audits: Record<string, { violations: AxeViolation[]; passes: number }> = {};

describe.skipIf(noBrowser)(
  `device app in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  { timeout: 60_000 },
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let page: Page;
    let cdp: CDPSession;
    let authenticatorId: string;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    const problems: string[] = [];
    const ids: Record<string, string> = {};

    async function audit(name: string) {
      const result = await axeAudit(page);
      audits[name] = result;
      const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, `${name}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
    }

    async function createRequest(body: Record<string, unknown>) {
      const created = await api.agent(acct.api_key).post('/actions', body);
      expect(created.status).toBe(200);
      return created.body as { id: string; title: string };
    }

    const visible = (selector: string) => page.waitForSelector(selector, { visible: true, timeout: 20_000 });

    beforeAll(async () => {
      db = await createTestDatabase();
      const vapid = webpush.generateVAPIDKeys();
      stack = await startStack({
        mode: 'all-in-one',
        databaseUrl: db.url,
        name: 'device-app-browser',
        env: { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey },
      });
      // WebAuthn needs a secure context and a domain: http://localhost is both.
      const base = new URL(stack.baseUrl);
      base.hostname = 'localhost';
      origin = base.origin;
      api = apiClient(base.href.replace(/\/$/, ''));
      acct = await api.newAccount();
      ({ browser, close: closeBrowser } = await launchBrowser());
      page = await browser.newPage();
      await page.setViewport(PHONE);
      collectProblems(page, problems);
      cdp = await page.createCDPSession();
      await cdp.send('WebAuthn.enable', { enableUI: false });
      ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      }));
    }, 120_000);

    afterAll(async () => {
      writeFileSync(join(ARTIFACTS, 'axe-summary.json'), JSON.stringify(audits, null, 1));
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('signs in; the pending list shows the agent first, the amount large, a risk badge, a countdown and relative time; no permission is asked on load', async () => {
      ids.lamp = (
        await createRequest({
          action_type: 'purchase',
          title: 'Buy a desk lamp',
          amount: 42.5,
          risk_level: 'high',
          recipient: 'Lamps Inc.',
          expires_in_seconds: 900,
        })
      ).id;
      ids.lease = (
        await createRequest({
          action_type: 'legal',
          title: 'Sign the office lease',
          risk_level: 'critical',
          description: 'Two-year lease, 3rd floor.',
        })
      ).id;
      await page.goto(`${origin}/app/`, { waitUntil: 'networkidle2' });
      await visible('#sign-in-form');
      await audit('sign-in');
      await screenshot(page, 'phone-sign-in');

      await page.type('#device-id', acct.device_id);
      await page.click('#sign-in-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#pending-list .card').length === 2, {
        timeout: 20_000,
      });
      const card = await page.$eval(`[data-request="${ids.lamp}"]`, (li) => ({
        first: li.firstElementChild?.textContent,
        amount: li.querySelector('.amount')?.textContent,
        badge: li.querySelector('.badge')?.textContent,
        countdown: li.querySelector('.countdown')?.textContent,
        link: li.querySelector('h3 a')?.getAttribute('href'),
      }));
      expect(card.first).toMatch(/^default · (just now|\d+ seconds? ago)/); // the agent's name comes first
      expect(card.amount).toBe('$42.50');
      expect(card.badge).toBe('High risk');
      expect(card.countdown).toMatch(/^Expires in 1[45]:\d\d$/);
      expect(card.link).toBe(`#/requests/${ids.lamp}`);
      const before = await page.$eval(`[data-request="${ids.lamp}"] .countdown`, (n) => n.textContent);
      // It counts down (waited for: page timers run late on a busy machine).
      await page.waitForFunction(
        (sel, text) => document.querySelector(sel)?.textContent !== text,
        { timeout: 20_000 },
        `[data-request="${ids.lamp}"] .countdown`,
        before,
      );
      expect(await page.evaluate(() => Notification.permission)).toBe('default');
      // Offered once the service worker is ready (it first caches the app shell), not asked for.
      await visible('#notify');
      expect(await page.$eval('#notify', (b) => b.textContent)).toBe('Notify me on this phone');
      await audit('pending');
      await screenshot(page, 'phone-pending');
    });

    it('registers a service worker that controls the app, with an installable manifest and its 192 and 512 icons', async () => {
      await page.evaluate(() => navigator.serviceWorker.ready);
      await page.reload({ waitUntil: 'networkidle2' });
      expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(`${origin}/app/sw.js`);
      const manifest = await cdp.send('Page.getAppManifest');
      expect(manifest.url).toBe(`${origin}/app/manifest.webmanifest`);
      expect(manifest.errors).toEqual([]);
      const data = JSON.parse(manifest.data!);
      expect(data).toMatchObject({
        name: 'Agent Auth: approvals',
        short_name: 'Approvals',
        start_url: '/app/',
        scope: '/app/',
        display: 'standalone',
      });
      expect(data.icons.map((i: { sizes: string }) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
      for (const size of [192, 512]) {
        const icon = await page.evaluate(async (s) => {
          const res = await fetch(`/app/icon-${s}.png`);
          const img = await createImageBitmap(await res.blob());
          return { type: res.headers.get('content-type'), width: img.width, height: img.height };
        }, size);
        expect(icon).toEqual({ type: 'image/png', width: size, height: size });
      }
      const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
      expect(installabilityErrors).toEqual([]);
    });

    it("sets up this phone's passkey with the platform authenticator", async () => {
      await page.goto(`${origin}/app/#/device`, { waitUntil: 'networkidle2' });
      await visible('#add-passkey');
      // The button is in the page at once; the state line is written when the device's passkeys have been read.
      await page.waitForFunction(() => document.getElementById('passkey-state')!.textContent !== '', {
        timeout: 20_000,
      });
      expect(await page.$eval('#passkey-state', (p) => p.textContent)).toMatch(/set up this phone's passkey/);
      await audit('device');
      await page.click('#add-passkey');
      await page.waitForFunction(() => document.querySelectorAll('#passkey-list li').length === 1, { timeout: 20_000 });
      expect(await page.$eval('#message', (p) => p.textContent)).toMatch(/Passkey added/);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.rpId).toBe('localhost');
      const listed = (await api.device(acct.device_id).get('/device/passkeys')).body.passkeys;
      expect(listed).toEqual([
        expect.objectContaining({
          credential_id: credentials[0]!.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'),
        }),
      ]);
      await audit('device-with-passkey');
      await screenshot(page, 'phone-passkey-setup');
    });

    it('opens a request from its link and approves it through the passkey: biometric, user verified', async () => {
      await page.goto(`${origin}/app/#/requests/${ids.lamp}`, { waitUntil: 'networkidle2' });
      await visible('#request-heading');
      expect(await page.$eval('#request-heading', (h) => h.textContent)).toBe('Buy a desk lamp');
      expect(await page.$eval('#request .facts', (d) => d.textContent)).toContain('Lamps Inc.');
      await audit('request');
      await screenshot(page, 'phone-request-from-link');

      await page.locator(`#request [aria-label="Approve: Buy a desk lamp"]`).setTimeout(15_000).click();
      await page.waitForFunction(
        () =>
          /Approved: Buy a desk lamp \(verified with your passkey\)/.test(
            document.getElementById('message')!.textContent!,
          ),
        { timeout: 15_000 },
      );
      expect(await page.evaluate(() => location.hash)).toBe('#/requests');
      const action = (await api.agent(acct.api_key).get(`/actions/${ids.lamp}`)).body;
      expect(action).toMatchObject({
        status: 'approved',
        resolved_by: 'biometric',
        user_verified: true,
        passkey_id: expect.stringMatching(/^pk_/),
      });
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials[0]!.signCount).toBeGreaterThanOrEqual(1);
    });

    it('denies from the list through the passkey; then the empty state', async () => {
      await page.waitForFunction(() => document.querySelectorAll('#pending-list .card').length === 1, {
        timeout: 20_000,
      });
      await page.locator(`[aria-label="Deny: Sign the office lease"]`).setTimeout(15_000).click();
      await page.waitForFunction(
        () => /Denied: Sign the office lease/.test(document.getElementById('message')!.textContent!),
        { timeout: 15_000 },
      );
      expect((await api.agent(acct.api_key).get(`/actions/${ids.lease}`)).body).toMatchObject({
        status: 'denied',
        user_verified: true,
      });
      await visible('#pending-empty');
      expect(await page.$eval('#pending-empty', (d) => d.textContent)).toMatch(/Nothing is waiting for you/);
      await audit('pending-empty');
      await screenshot(page, 'phone-pending-empty');
      // A link to a request that is no longer waiting says so.
      await page.goto(`${origin}/app/#/requests/${ids.lease}`, { waitUntil: 'networkidle2' });
      await page.waitForFunction(
        () => /not waiting any more/.test(document.getElementById('request-body')!.textContent!),
        { timeout: 20_000 },
      );
      await audit('request-gone');
    });

    it('shows a pushed request as a notification (title, amount, risk) that opens that request, and clears it once settled', async () => {
      await browser.defaultBrowserContext().overridePermissions(origin, ['notifications']);
      const created = await createRequest({
        action_type: 'purchase',
        title: 'Renew the domain',
        amount: 19.99,
        risk_level: 'medium',
      });
      await page.goto(`${origin}/app/#/rules`, { waitUntil: 'networkidle2' });
      await audit('rules');
      const action = (await api.agent(acct.api_key).get(`/actions/${created.id}`)).body;
      const event = (type: 'action.created' | 'action.resolved', a: Record<string, unknown>) =>
        ActionEvent.parse({
          id: 'msg_1',
          type,
          account_id: acct.account_id,
          agent_id: acct.agent_id,
          callback_url: null,
          occurred_at: new Date().toISOString(),
          action: { ...a },
        });
      const fields = {
        id: action.id,
        status: 'pending',
        action_type: action.action_type,
        title: action.title,
        risk_level: action.risk_level,
        amount: action.amount,
        currency: action.currency,
        resolved_by: null,
        resolved_at: null,
        created_at: action.created_at,
        expires_at: action.expires_at,
      };

      // The message the notifier sends, delivered to the service worker as a real push event.
      const target = await browser.waitForTarget(
        (t) => t.type() === 'service_worker' && t.url() === `${origin}/app/sw.js`,
      );
      const worker = (await target.worker())!;
      await worker.evaluate(
        async (m) => (self as any).onPushMessage(m),
        pushMessageOf(event('action.created', fields)) as any,
      );
      const shown = await page.evaluate(async (tag) => {
        const registration = await navigator.serviceWorker.ready;
        return (await registration.getNotifications({ tag })).map((n) => ({
          title: n.title,
          body: n.body,
          url: n.data.url,
        }));
      }, `request:${created.id}`);
      expect(shown).toEqual([
        {
          title: 'Approval requested: Renew the domain',
          body: '$19.99 · medium risk · purchase',
          url: `/app/#/requests/${created.id}`,
        },
      ]);

      // Tapping it: the service worker's click handler, on the notification it showed.
      await worker.evaluate(async (tag) => {
        const [notification] = await (self as any).registration.getNotifications({ tag });
        await (self as any).onNotificationClick(notification);
      }, `request:${created.id}`);
      await page.waitForFunction((id) => location.hash === `#/requests/${id}`, { timeout: 20_000 }, created.id);
      await page.waitForFunction(() => document.getElementById('request-heading')?.textContent === 'Renew the domain', {
        timeout: 20_000,
      });
      expect(
        await page.evaluate(
          async (tag) => (await (await navigator.serviceWorker.ready).getNotifications({ tag })).length,
          `request:${created.id}`,
        ),
      ).toBe(0);

      // Shown again, then settled elsewhere: the outcome's push closes it.
      await worker.evaluate(
        async (m) => (self as any).onPushMessage(m),
        pushMessageOf(event('action.created', fields)) as any,
      );
      const resolvedAt = new Date(Date.parse(action.created_at) + 5000).toISOString();
      await worker.evaluate(
        async (m) => (self as any).onPushMessage(m),
        pushMessageOf(
          event('action.resolved', { ...fields, status: 'approved', resolved_by: 'totp', resolved_at: resolvedAt }),
        ) as any,
      );
      expect(
        await page.evaluate(
          async (tag) => (await (await navigator.serviceWorker.ready).getNotifications({ tag })).length,
          `request:${created.id}`,
        ),
      ).toBe(0);
      ids.domain = created.id;
    });

    it('starts offline from the cached shell and says it is offline', async () => {
      // Opened from a link to a request: offline, whether it still waits is unknown, so it is not called gone.
      await page.goto(`${origin}/app/#/requests/${ids.domain}`, { waitUntil: 'networkidle2' });
      await page.setOfflineMode(true);
      try {
        await page.reload({ waitUntil: 'domcontentloaded' });
        await visible('#offline');
        expect(await page.$eval('#offline', (p) => p.textContent)).toMatch(/You are offline/);
        await visible('#tabs'); // the kept device opens the app, not the sign-in
        expect(await page.$eval('#sign-in', (n) => n.hidden)).toBe(true);
        await page.waitForFunction(
          () => /Could not load this/.test(document.getElementById('request-body')!.textContent!),
          { timeout: 20_000 },
        );
        expect(await page.$eval('#request-body', (n) => n.textContent)).not.toMatch(/not waiting any more/);
        await screenshot(page, 'phone-offline');
      } finally {
        await page.setOfflineMode(false); // the tests after this one need the network, whatever happened here
      }
      await page.waitForSelector('#offline', { hidden: true, timeout: 15_000 }); // back online: the notice goes
    });

    it('History: each resolved request with who resolved it and how, its receipt verified in the browser, its trail, and the whole chain', async () => {
      await page.goto(`${origin}/app/#/history`, { waitUntil: 'networkidle2' });
      await visible('#history h2');
      // The passkey approval and denial above, each with its receipt checked by WebCrypto against /.well-known/jwks.json.
      await page.waitForFunction(() => document.querySelectorAll('#history-list .card p.verified').length >= 2, {
        timeout: 10_000,
      });
      const texts = await page.$$eval('#history-list .card', (cards) => cards.map((c) => c.textContent ?? ''));
      expect(texts.some((t) => /Approved on device .*passkey \(biometric\)/.test(t))).toBe(true);
      expect(texts.some((t) => /Denied on device/.test(t))).toBe(true);
      await audit('history');
      await page.locator('#history-list .card button').setTimeout(15_000).click();
      await page.waitForFunction(() => document.querySelectorAll('#history-list .trail li .verified').length >= 2, {
        timeout: 10_000,
      });
      await page.locator('#verify-chain').setTimeout(15_000).click();
      await page.waitForFunction(() => document.querySelector('#chain-state')?.classList.contains('verified'), {
        timeout: 15_000,
      });
      expect(await page.$eval('#chain-state', (n) => n.textContent)).toMatch(/Audit chain verified: \d+ events/);
      await screenshot(page, 'history');
    });

    it('every other view passes the audit, and the same views on a desktop screen', async () => {
      for (const view of ['limits', 'vault', 'agents']) {
        await page.goto(`${origin}/app/#/${view}`, { waitUntil: 'networkidle2' });
        await visible(`#${view} h2`);
        await audit(view);
      }
      await page.setViewport(DESKTOP);
      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await page.waitForFunction(() => document.querySelectorAll('#pending-list .card').length === 1, {
        timeout: 20_000,
      });
      await audit('pending-desktop');
      await screenshot(page, 'desktop-pending');
      await page.goto(`${origin}/app/#/requests/${ids.domain}`, { waitUntil: 'networkidle2' });
      await visible('#request-heading');
      await screenshot(page, 'desktop-request-from-link');
      await page.goto(`${origin}/app/#/device`, { waitUntil: 'networkidle2' });
      await page.waitForFunction(() => document.querySelectorAll('#passkey-list li').length === 1, { timeout: 20_000 });
      await audit('device-desktop');
      await screenshot(page, 'desktop-passkey-setup');
      // Nothing the app did was refused by its own Content-Security-Policy, and no script failed.
      expect(problems.filter((p) => !/ERR_INTERNET_DISCONNECTED|Failed to load resource/.test(p))).toEqual([]);
    });
  },
);
