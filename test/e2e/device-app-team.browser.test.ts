import type { Browser, Page } from 'puppeteer-core';
import qrcode from 'qrcode-generator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import {
  PHONE,
  axeAudit,
  launchBrowser,
  noBrowser,
  screenshot,
  signIn,
  waitForText,
  collectProblems,
} from '../harness/browser.js';
import { startOidcProvider, type TestOidcProvider } from '../harness/oidc-provider.js';

// The Team view and the join page in a real browser (headless Chromium) on a phone-sized screen, against a real
// stack: the owner invites a person (the QR code carries the join link), the person's phone joins from the link, the
// app offers each role only what it may do, a role changes and a member is removed; and the company's sign-in is
// offered and completed against a real OpenID provider. Screenshots go to test-artifacts/device-app/.

/** Generous: the suite runs in parallel on two busy cores. */
const WAIT = 60_000;

describe.skipIf(noBrowser)(
  `device app: the team, joining and the company's sign-in, in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  { timeout: 240_000 },
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let owner: Page;
    let idp: TestOidcProvider;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    const problems: string[] = [];

    const watch = (page: Page) => collectProblems(page, problems);
    /** Whether an element is on the screen (not only its `hidden` property: CSS decides what shows). */
    const shown = (page: Page, selector: string) => page.$eval(selector, (n) => (n as HTMLElement).checkVisibility());
    const textOf = (page: Page, selector: string) => page.$eval(selector, (n) => n.textContent ?? '');
    const visibleTabs = (page: Page) =>
      page.$$eval('#tabs a', (as) =>
        as.filter((a) => !(a as HTMLElement).hidden).map((a) => a.getAttribute('data-view')),
      );
    const waitText = (page: Page, selector: string, pattern: RegExp) =>
      waitForText(page, selector, pattern, { timeoutMs: WAIT, problems });
    const memberCards = (page: Page) =>
      page.$$eval('#member-list li.member', (lis) =>
        lis.map((li) => ({
          name: li.querySelector('.member-name')?.textContent,
          role: li.querySelector('.badge')?.textContent,
          manageable: !!li.querySelector('select'),
        })),
      );
    const seriousViolations = async (page: Page) =>
      (await axeAudit(page)).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');

    beforeAll(async () => {
      db = await createTestDatabase();
      // The gateway's port is known before it starts: the provider's client names its callback.
      const { createServer } = await import('node:net');
      const probe = createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
      const port = (probe.address() as { port: number }).port;
      await new Promise<void>((r) => probe.close(() => r()));
      origin = `http://127.0.0.1:${port}`;
      idp = await startOidcProvider({
        clientId: 'agent-auth',
        clientSecret: 'the-test-client-secret',
        redirectUri: `${origin}/auth/oidc/callback`,
        accounts: { erin: { email: 'erin@example.com', email_verified: true } },
      });
      stack = await startStack({
        mode: 'all-in-one',
        databaseUrl: db.url,
        name: 'device-app-team',
        env: {
          PORT: String(port),
          OIDC_ISSUER: idp.issuer,
          OIDC_CLIENT_ID: 'agent-auth',
          OIDC_CLIENT_SECRET: 'the-test-client-secret',
          OIDC_PROVIDER_NAME: 'Example SSO',
        },
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      ({ browser, close: closeBrowser } = await launchBrowser());
      owner = await browser.newPage();
      await owner.setViewport(PHONE);
      watch(owner);
      await signIn(owner, { origin, deviceId: acct.device_id, timeoutMs: WAIT });
    }, 180_000);

    afterAll(async () => {
      await closeBrowser?.();
      await stack?.stop();
      await idp?.stop();
      await db?.drop();
    });

    let joinUrl: string;

    it('the owner invites a person with a role: the invite shows a QR code of the join link, and the link', async () => {
      expect(await visibleTabs(owner)).toEqual([
        'pending',
        'rules',
        'limits',
        'grants',
        'vault',
        'agents',
        'history',
        'team',
        'device',
      ]);
      await owner.goto(`${origin}/app/#/team`, { waitUntil: 'networkidle2' });
      await waitText(owner, '#member-list', /Owner/);
      // The owner's own card has no controls: another owner changes or removes them.
      expect(await memberCards(owner)).toEqual([{ name: 'Owner', role: 'owner', manageable: false }]);
      expect(await owner.$eval('#invite-form select[name=role]', (s) => (s as HTMLSelectElement).value)).toBe(
        'approver',
      );
      expect(await textOf(owner, '#member-list')).toContain('(you)');
      await owner.locator('#invite-form input[name=name]').fill('Dana');
      await owner.locator('#invite-form input[name=email]').fill('dana@example.com');
      await owner.select('#invite-form select[name=role]', 'approver');
      await owner.locator('#invite-form button[type=submit]').click();
      await waitText(owner, '#invite-shown h3', /^Invite for Dana \(approver\)$/);
      joinUrl = await owner.$eval('#invite-shown .join-link', (i) => (i as HTMLInputElement).value);
      expect(joinUrl).toMatch(new RegExp(`^${origin}/app/#/join\\?code=inv_[A-Za-z0-9]{32}$`));
      // The QR code is exactly the join link's (drawn again here with the same library).
      const qr = qrcode(0, 'M');
      qr.addData(joinUrl);
      qr.make();
      expect(await owner.$eval('#invite-shown img.qr', (img) => (img as HTMLImageElement).src)).toBe(
        qr.createDataURL(6, 24),
      );
      expect(
        await owner.$eval('#invite-shown img.qr', (img) => (img as HTMLImageElement).naturalWidth),
      ).toBeGreaterThan(100);
      await waitText(owner, '#member-list', /Dana/);
      expect(await textOf(owner, '#member-list')).toContain('dana@example.com · invite not used yet');
      expect(await memberCards(owner)).toEqual([
        { name: 'Owner', role: 'owner', manageable: false },
        { name: 'Dana', role: 'approver', manageable: true },
      ]);
      // Nothing is wider than the phone's screen.
      expect(await owner.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await seriousViolations(owner)).toEqual([]);
      await screenshot(owner, 'phone-team-invite');
    });

    it("Dana's phone joins from the link, and sees only what an approver may use", async () => {
      const context = await browser.createBrowserContext();
      const dana = await context.newPage();
      await dana.setViewport(PHONE);
      watch(dana);
      await dana.goto(joinUrl, { waitUntil: 'networkidle2' });
      await dana.waitForSelector('#join:not([hidden])', { timeout: WAIT });
      expect(await shown(dana, '#sign-in')).toBe(false);
      expect(await shown(dana, '#tabs')).toBe(false);
      expect(await dana.$eval('#join-device-name', (i) => (i as HTMLInputElement).value)).not.toBe('');
      expect(await seriousViolations(dana)).toEqual([]);
      await screenshot(dana, 'phone-join');
      await dana.$eval('#join-device-name', (i) => {
        (i as HTMLInputElement).value = "Dana's phone";
      });
      await dana.locator('#join-form button[type=submit]').click();
      await dana.waitForSelector('#tabs:not([hidden])', { timeout: WAIT });
      await waitText(dana, '#message', /^Welcome, Dana: this phone is one of your devices now\.$/);
      // The code left the address bar; the approver sees pending requests, the team and this phone only.
      expect(new URL(dana.url()).hash).toBe('#/requests');
      expect(await visibleTabs(dana)).toEqual(['pending', 'team', 'device']);
      // A view the role may not use is not drawn (no 403 met): the approver lands on the pending list.
      await dana.goto(`${origin}/app/#/rules`, { waitUntil: 'networkidle2' });
      await dana.waitForSelector('#pending:not([hidden])', { timeout: WAIT });
      expect(await shown(dana, '#rules')).toBe(false);
      expect(await shown(dana, '#error')).toBe(false);
      await dana.goto(`${origin}/app/#/team`, { waitUntil: 'networkidle2' });
      await waitText(dana, '#member-list', /Dana/);
      expect(await memberCards(dana)).toEqual([
        { name: 'Owner', role: 'owner', manageable: false },
        { name: 'Dana', role: 'approver', manageable: false },
      ]);
      expect(await shown(dana, '#invite-form')).toBe(false);
      expect(await shown(dana, '#team-note')).toBe(true);
      await screenshot(dana, 'phone-team-approver');

      // A rule that leaves purchases to Dana, and to the owners after 5 minutes: the Rules view says so by name.
      const danaId = (await api.device(acct.device_id).get('/members')).body.members.find(
        (m: { name: string }) => m.name === 'Dana',
      ).member_id;
      const rule = await api.device(acct.device_id).post('/rules', {
        name: 'purchases to Dana',
        decision: 'ask',
        action_type: 'purchase',
        approvers: [danaId],
        escalate_after_seconds: 300,
        escalate_to: ['role:owner'],
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);
      await owner.goto(`${origin}/app/#/rules`, { waitUntil: 'networkidle2' });
      await waitText(owner, '#rule-list', /purchases to Dana/);
      expect(await textOf(owner, '#rule-list .routing')).toBe('Asks Dana (approver); after 5 min also the owners');
      expect(await textOf(owner, '#rule-list li span')).toMatch(
        /^purchases to Dana: Ask a person about purchase requests/,
      );
      await screenshot(owner, 'phone-rules-routing');

      // A purchase the rule leaves to Dana: her pending list shows whom it waits for and when it goes further.
      const asked = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: 'Standing desk',
        amount: 420,
        currency: 'USD',
      });
      expect(asked.body.status, JSON.stringify(asked.body)).toBe('pending');
      await dana.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await waitText(dana, '#pending-list', /Standing desk/);
      expect(await textOf(dana, '#pending-list .routing')).toMatch(
        /^Waiting for Dana \(approver\) — escalates to the owners in (4|5) min$/,
      );
      await screenshot(dana, 'phone-pending-routed');

      // The owner makes Dana an auditor: her app offers the history instead of the pending list.
      await owner.goto(`${origin}/app/#/team`, { waitUntil: 'networkidle2' });
      await waitText(owner, '#member-list', /Dana/);
      await owner.select('select[aria-label="Role of Dana"]', 'auditor');
      await waitText(owner, '#message', /Dana's role is auditor now/);
      await dana.reload({ waitUntil: 'networkidle2' });
      await dana.waitForSelector('#tabs:not([hidden])', { timeout: WAIT });
      expect(await visibleTabs(dana)).toEqual(['history', 'team', 'device']);
      // The auditor's history reads the audit trail without a refusal.
      await dana.goto(`${origin}/app/#/history`, { waitUntil: 'networkidle2' });
      await dana.waitForSelector('#history:not([hidden])', { timeout: WAIT });
      await waitText(dana, '#history-list', /member_joined|Approved|Denied|resolved|\S/);
      expect(await shown(dana, '#error')).toBe(false);
      await dana.goto(`${origin}/app/#/device`, { waitUntil: 'networkidle2' });
      await dana.waitForSelector('#device:not([hidden])', { timeout: WAIT });
      expect(
        await dana.$$eval('#device .answering', (ps) => ps.map((p) => (p as HTMLElement).checkVisibility())),
      ).toEqual([false, false, false]);
      await waitText(dana, '#account', /Dana \(auditor\)/);

      // Removing asks once more; then Dana's device stops working at once.
      await owner.locator('button[aria-label="Remove Dana"]').click();
      await owner.locator('::-p-text(Yes, remove Dana)').click();
      await waitText(owner, '#message', /Dana is removed/);
      expect((await memberCards(owner)).map((m) => m.name)).toEqual(['Owner']);
      const stored = await dana.evaluate(() => localStorage.getItem('agent-auth-device-id'));
      expect((await api.device(stored!).get('/account')).status).toBe(401);
      await context.close();
      expect(problems.filter((p) => !/401|Failed to load resource/.test(p))).toEqual([]);
    });

    it('a join link of a removed member and a refused sign-in are shown in words on the page', async () => {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setViewport(PHONE);
      await page.goto(
        `${origin}/app/#/signin?error=${encodeURIComponent('Sign-in refused: the provider has not verified the email address x@example.com')}`,
        { waitUntil: 'networkidle2' },
      );
      await waitText(
        page,
        '#error',
        /^Sign-in refused: the provider has not verified the email address x@example\.com$/,
      );
      expect(await shown(page, '#sign-in')).toBe(true);
      expect(new URL(page.url()).hash).toBe('#/requests');
      await page.goto(joinUrl, { waitUntil: 'networkidle2' });
      await page.reload({ waitUntil: 'networkidle2' });
      await page.locator('#join-form button[type=submit]').setTimeout(WAIT).click();
      await waitText(page, '#error', /^No invite with that code: check it, or ask for a new invite$/);
      expect(await shown(page, '#tabs')).toBe(false);
      await context.close();
    });

    it("offers the company's sign-in and binds the verified email to its member's new device", async () => {
      expect(
        (await api.device(acct.device_id).post('/members', { name: 'Erin', email: 'erin@example.com', role: 'admin' }))
          .status,
      ).toBe(200);
      const context = await browser.createBrowserContext();
      const erin = await context.newPage();
      await erin.setViewport(PHONE);
      watch(erin);
      await erin.goto(`${origin}/app/`, { waitUntil: 'networkidle2' });
      await erin.waitForSelector('#sso:not([hidden])', { timeout: WAIT });
      expect(await textOf(erin, '#sso-link')).toBe('Sign in with Example SSO');
      await screenshot(erin, 'phone-sign-in-company');
      await Promise.all([erin.waitForNavigation(), erin.locator('#sso-link').click()]);
      // The provider's own login and consent pages.
      await erin.locator('input[name=login]').setTimeout(WAIT).fill('erin');
      await erin.locator('input[name=password]').fill('any');
      await Promise.all([erin.waitForNavigation(), erin.locator('button[type=submit]').click()]);
      await Promise.all([
        erin.waitForNavigation({ waitUntil: 'networkidle2' }),
        erin.locator('button[type=submit]').click(),
      ]);
      await erin.waitForSelector('#tabs:not([hidden])', { timeout: WAIT });
      await waitText(erin, '#message', /^Signed in: this browser is a device of Erin now\.$/);
      await screenshot(erin, 'phone-signed-in-company');
      expect(new URL(erin.url()).hash).toBe('#/requests');
      expect(await visibleTabs(erin)).toContain('rules');
      await context.close();
    });
  },
);
