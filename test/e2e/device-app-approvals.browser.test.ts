import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
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
  signIn,
  collectProblems,
} from '../harness/browser.js';

// Approvals without fatigue in the device app, in a real browser (headless Chromium): several requests reviewed in
// full and approved or denied together with one passkey check, the explicit confirmation before approving a
// critical or irreversible request, and the empty states. Screenshots go to test-artifacts/device-app/.

const audits: Record<string, { violations: AxeViolation[]; passes: number }> = {};
/** Generous: CI runs the suite in parallel on two busy cores. */
const WAIT = 30_000;

describe.skipIf(noBrowser)(
  `device app approvals in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
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

    async function audit(name: string, on: Page = page) {
      const result = await axeAudit(on);
      audits[name] = result;
      const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, `${name}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
    }

    async function createRequest(body: Record<string, unknown>, apiKey = acct.api_key) {
      const created = await api.agent(apiKey).post('/actions', body);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      return created.body as { id: string; title: string; status: string; resolved_by: string | null };
    }

    const statusOf = async (id: string) => (await api.agent(acct.api_key).get(`/actions/${id}`)).body;

    /** Waits until the page's pending list shows exactly these request ids (in any order). */
    async function listShows(on: Page, ids: string[]) {
      await on.waitForFunction(
        (want: string[]) => {
          const shown = [...document.querySelectorAll('#pending-list [data-request]')].map((n) =>
            n.getAttribute('data-request'),
          );
          return shown.length === want.length && want.every((id) => shown.includes(id));
        },
        { timeout: WAIT },
        ids,
      );
    }

    const messageMatches = (on: Page, pattern: RegExp) =>
      on.waitForFunction(
        (source: string) => new RegExp(source).test(document.getElementById('message')!.textContent!),
        { timeout: WAIT },
        pattern.source,
      );

    /** A page for a device in its own browser context (its own storage), signed in, with a virtual passkey. */
    async function deviceSession(context: BrowserContext, deviceId: string) {
      const p = await context.newPage();
      await p.setViewport(PHONE);
      collectProblems(p, problems);
      const cdp: CDPSession = await p.createCDPSession();
      await cdp.send('WebAuthn.enable', { enableUI: false });
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await signIn(p, { origin, deviceId: deviceId, timeoutMs: WAIT });
      return p;
    }

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app-approvals' });
      // WebAuthn needs a secure context and a domain: http://localhost is both.
      const base = new URL(stack.baseUrl);
      base.hostname = 'localhost';
      origin = base.origin;
      api = apiClient(base.href.replace(/\/$/, ''));
      acct = await api.newAccount();
      ({ browser, close: closeBrowser } = await launchBrowser());
    }, 180_000);

    afterAll(async () => {
      writeFileSync(join(ARTIFACTS, 'axe-summary-approvals.json'), JSON.stringify(audits, null, 1));
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('signs in and sets up a passkey; the empty pending list says so', async () => {
      page = await deviceSession(browser.defaultBrowserContext(), acct.device_id);
      await page.waitForSelector('#pending-empty:not([hidden])', { timeout: WAIT });
      expect(await page.$eval('#pending-empty', (n) => n.textContent)).toMatch(/Nothing is waiting for you/);
      expect(await page.$eval('#select-row', (n) => n.hidden)).toBe(true);
      await page.goto(`${origin}/app/#/device`, { waitUntil: 'networkidle2' });
      // Clicked once the view has read the device's passkeys (the state line is written then), on the focused page:
      // Chromium refuses WebAuthn to a document without focus. Once, in a full CI run, no registration was sent;
      // should it happen again, the failure says what the page told its holder.
      await page.waitForFunction(() => document.getElementById('passkey-state')!.textContent !== '', {
        timeout: WAIT,
      });
      await page.bringToFront();
      await page.locator('#add-passkey').setTimeout(WAIT).click();
      await page
        .waitForFunction(() => document.querySelectorAll('#passkey-list li').length === 1, { timeout: WAIT })
        .catch(async (err: unknown) => {
          const said = await page.$eval('#message', (n) => n.textContent).catch(() => 'unreadable');
          throw new Error(
            `no passkey listed (${String(err)}); the page said: ${said}; console: ${problems.join(' | ')}`,
          );
        });
      expect((await api.device(acct.device_id).get('/device/passkeys')).body.passkeys).toHaveLength(1);
    });

    it('approves several requests together: each shown in full in the review, one passkey check for all', async () => {
      const paper = await createRequest({
        action_type: 'purchase',
        title: 'Buy printer paper',
        amount: 18.4,
        risk_level: 'low',
        recipient: 'Office Supply Co.',
        description: 'Five reams, A4.',
      });
      const email = await createRequest({
        action_type: 'communication',
        title: 'Email the landlord',
        risk_level: 'medium',
        metadata: { to: 'landlord@example.com' },
      });
      const post = await createRequest({ action_type: 'social', title: 'Post the team photo', risk_level: 'low' });
      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await listShows(page, [paper.id, email.id, post.id]);
      await page.waitForSelector('#select-row:not([hidden])', { timeout: WAIT });
      // The batch bar appears (in the pinned header) once something is ticked.
      expect(await page.$eval('#batch-bar', (n) => n.hidden)).toBe(true);

      await page.locator(`[aria-label="Select: ${paper.title}"]`).setTimeout(WAIT).click();
      await page.locator(`[aria-label="Select: ${email.title}"]`).setTimeout(WAIT).click();
      await page.waitForFunction(() => /2 of 3 selected/.test(document.getElementById('batch-count')!.textContent!), {
        timeout: WAIT,
      });
      await audit('pending-selected');
      await screenshot(page, 'phone-batch-selected');

      await page.locator('#batch-approve').setTimeout(WAIT).click();
      await page.waitForSelector('#batch-review:not([hidden])', { timeout: WAIT });
      // The review shows each selected request in full: description, recipient, metadata; and nothing else.
      const reviewed = await page.$$eval('#batch-items [data-review]', (items) =>
        items.map((n) => ({ id: n.getAttribute('data-review'), text: n.textContent })),
      );
      expect(reviewed.map((r) => r.id)).toEqual(expect.arrayContaining([paper.id, email.id]));
      expect(reviewed).toHaveLength(2);
      const paperText = reviewed.find((r) => r.id === paper.id)!.text!;
      expect(paperText).toContain('Five reams, A4.');
      expect(paperText).toContain('Office Supply Co.');
      expect(paperText).toContain('$18.40');
      expect(reviewed.find((r) => r.id === email.id)!.text).toContain('Metadata');
      expect(await page.$eval('#batch-review-title', (h) => h.textContent)).toBe('Approve these 2 requests?');
      expect(await page.$eval('#pending-list', (n) => n.hidden)).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('batch-review-title');
      await audit('batch-review');
      await screenshot(page, 'phone-batch-review');

      await page.locator('#batch-confirm').setTimeout(WAIT).click();
      await messageMatches(page, /Approved 2 of 2/);
      for (const r of [paper, email])
        expect(await statusOf(r.id)).toMatchObject({
          status: 'approved',
          resolved_by: 'biometric',
          user_verified: true,
        });
      expect((await statusOf(post.id)).status).toBe('pending');
      await listShows(page, [post.id]);
      // One request left: nothing to batch, and the selection is gone.
      expect(await page.$eval('#select-row', (n) => n.hidden)).toBe(true);
      expect(await page.$eval('#batch-bar', (n) => n.hidden)).toBe(true);
      await screenshot(page, 'phone-batch-done');
    });

    it('denies several together with one reason, after cancelling a first review', async () => {
      const spam = await createRequest({
        action_type: 'communication',
        title: 'Send the newsletter',
        risk_level: 'low',
      });
      const pending = (await api.device(acct.device_id).get('/pending')).body.requests.map((r: { id: string }) => r.id);
      await listShows(page, pending);
      await page.locator('#select-all').setTimeout(WAIT).click();
      await page.waitForFunction(
        (n: number) => document.getElementById('batch-count')!.textContent === `${n} of ${n} selected`,
        { timeout: WAIT },
        pending.length,
      );
      await page.locator('#batch-deny').setTimeout(WAIT).click();
      await page.waitForSelector('#batch-review:not([hidden])', { timeout: WAIT });
      await page.locator('#batch-cancel').setTimeout(WAIT).click();
      await page.waitForSelector('#batch-review', { hidden: true, timeout: WAIT });
      expect(await page.$eval('#pending-list', (n) => n.hidden)).toBe(false);

      await page.locator('#batch-deny').setTimeout(WAIT).click();
      await page.waitForSelector('#batch-reason:not([hidden])', { timeout: WAIT });
      await page.locator('#batch-reason').setTimeout(WAIT).fill('Not this week');
      expect(await page.$eval('#batch-confirm', (b) => b.textContent)).toBe(`Deny all ${pending.length}`);
      await page.locator('#batch-confirm').setTimeout(WAIT).click();
      await messageMatches(page, new RegExp(`Denied ${pending.length} of ${pending.length}`));
      expect(await statusOf(spam.id)).toMatchObject({ status: 'denied', reason: 'Not this week', user_verified: true });
      await page.waitForSelector('#pending-empty:not([hidden])', { timeout: WAIT });
    });

    it('asks for an explicit confirmation before approving a critical or irreversible request', async () => {
      const wire = await createRequest({
        action_type: 'purchase',
        title: 'Wire the deposit',
        amount: 2500,
        risk_level: 'critical',
        reversible: false,
        recipient: 'Acme Properties',
      });
      await listShows(page, [wire.id]);
      await page.locator(`[aria-label="Approve: ${wire.title}"]`).setTimeout(WAIT).click();
      await page.waitForSelector(`[data-request="${wire.id}"] .confirm`, { timeout: WAIT });
      const text = await page.$eval(`[data-request="${wire.id}"] .confirm-title`, (p) => p.textContent);
      expect(text).toMatch(/critical risk and it cannot be undone/);
      // Focus moves to the question, so a screen reader reads it; nothing was sent yet.
      expect(await page.evaluate(() => document.activeElement?.className)).toBe('confirm-title');
      expect((await statusOf(wire.id)).status).toBe('pending');
      await audit('confirm-critical');
      await screenshot(page, 'phone-confirm-critical');

      await page.locator(`[data-request="${wire.id}"] button.cancel`).setTimeout(WAIT).click();
      await page.waitForSelector(`[aria-label="Approve: ${wire.title}"]`, { timeout: WAIT });
      expect((await statusOf(wire.id)).status).toBe('pending');

      // From its link the same: the detail view asks too.
      await page.goto(`${origin}/app/#/requests/${wire.id}`, { waitUntil: 'networkidle2' });
      await page.locator(`#request [aria-label="Approve: ${wire.title}"]`).setTimeout(WAIT).click();
      await page.locator(`#request [aria-label="Yes, approve: ${wire.title}"]`).setTimeout(WAIT).click();
      await messageMatches(page, /Approved: Wire the deposit \(verified with your passkey\)/);
      expect(await statusOf(wire.id)).toMatchObject({ status: 'approved', user_verified: true });
    });

    it('approves with "Allow similar for…" (1 hour, $50, 3 uses): the next similar request is approved by the grant at once; the Grants list shows it and revokes it', async () => {
      const beans = await createRequest({
        action_type: 'purchase',
        title: 'Buy coffee beans',
        amount: 12,
        recipient: 'Bean Co.',
        risk_level: 'low',
      });
      await page.goto(`${origin}/app/#/requests/${beans.id}`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('#grants-tab:not([hidden])', { timeout: WAIT });
      await page.locator('#request .grant summary').setTimeout(WAIT).click();
      await page.locator('#request .grant select').setTimeout(WAIT).fill('3600');
      await page.locator('#request .grant input[name=budget]').setTimeout(WAIT).fill('50');
      await page.locator('#request .grant input[name=uses]').setTimeout(WAIT).fill('3');
      expect(await page.$eval('#request .grant', (d) => d.textContent)).toMatch(
        /let default do the same \(purchase, to Bean Co\., in USD\) without asking/,
      );
      await audit('request-allow-similar');
      await screenshot(page, 'phone-allow-similar');
      await page.locator(`#request [aria-label="Approve: ${beans.title}"]`).setTimeout(WAIT).click();
      await messageMatches(
        page,
        /Approved: Buy coffee beans.*similar requests allowed for 1 hour, up to \$50\.00, 3 uses/,
      );

      const grants = (await api.device(acct.device_id).get('/grants')).body.grants;
      expect(grants).toEqual([
        expect.objectContaining({
          agent_id: acct.agent_id,
          action_type: 'purchase',
          recipient: 'Bean Co.',
          currency: 'USD',
          max_amount: 50,
          max_uses: 3,
          uses: 0,
          created_from: beans.id,
          revoked_at: null,
        }),
      ]);
      const grantId = grants[0].grant_id as string;
      // The next similar request is approved at creation by the grant.
      const more = await createRequest({
        action_type: 'purchase',
        title: 'Buy more coffee beans',
        amount: 8,
        recipient: 'Bean Co.',
        risk_level: 'low',
      });
      expect(more).toMatchObject({ status: 'approved', resolved_by: `grant:${grantId}` });

      await page.goto(`${origin}/app/#/grants`, { waitUntil: 'networkidle2' });
      await page.waitForSelector(`[data-grant="${grantId}"]`, { timeout: WAIT });
      const card = await page.$eval(`[data-grant="${grantId}"]`, (n) => n.textContent);
      expect(card).toContain('default · purchase · to Bean Co. · USD');
      expect(card).toContain('$8.00 of $50.00 spent');
      expect(card).toContain('1 of 3 uses');
      expect(card).toMatch(/active/);
      await audit('grants');
      await screenshot(page, 'phone-grants');

      await page.locator(`[data-grant="${grantId}"] button.deny`).setTimeout(WAIT).click();
      await messageMatches(page, /Grant revoked/);
      await page.waitForSelector(`[data-grant="${grantId}"].grant-revoked`, { timeout: WAIT });
      expect((await api.device(acct.device_id).get('/grants')).body.grants[0].revoked_at).not.toBeNull();
      // Revoked at once: the same request now waits for a person.
      const after = await createRequest({
        action_type: 'purchase',
        title: 'Buy even more beans',
        amount: 5,
        recipient: 'Bean Co.',
        risk_level: 'low',
      });
      expect(after.status).toBe('pending');
      await audit('grants-revoked');
      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await page.locator(`[aria-label="Deny: ${after.title}"]`).setTimeout(WAIT).click();
      await messageMatches(page, /Denied: Buy even more beans/);
    });

    it('a quorum of two devices: the first approval shows progress (1 of 2, who) on both phones, the second approves it', async () => {
      expect(
        (
          await api.device(acct.device_id).post('/rules', {
            name: 'two of us for legal',
            decision: 'require_quorum',
            quorum: 2,
            action_type: 'legal',
          })
        ).status,
      ).toBe(200);
      // A quorum counts people: the second phone is another member's.
      const second = await inviteAndJoin(api, acct.device_id, { name: 'Dana', role: 'approver' });
      const lease = await createRequest({
        action_type: 'legal',
        title: 'Sign the new lease',
        risk_level: 'high',
        description: 'Three years, unit 4B.',
      });
      expect(lease).toMatchObject({ status: 'pending', rule_applied: 'two of us for legal' });
      const context = await browser.createBrowserContext();
      const other = await deviceSession(context, second.device_id as string);
      await listShows(other, [lease.id]);
      expect(await other.$eval(`[data-request="${lease.id}"] .quorum-title`, (p) => p.textContent)).toBe(
        'Needs 2 people to approve: 0 of 2 approvals so far',
      );
      await other.locator(`[aria-label="Approve: ${lease.title}"]`).setTimeout(WAIT).click();
      await messageMatches(other, /Your approval is counted: 1 of 2 approvals for "Sign the new lease"/);
      // Still pending; this phone shows its own approval and cannot give it twice.
      await other.waitForFunction(
        (id: string) =>
          document.querySelector(`[data-request="${id}"] .quorum-title`)?.textContent ===
          'Needs 2 people to approve: 1 of 2 approvals so far',
        { timeout: WAIT },
        lease.id,
      );
      expect(
        await other.$eval(`[data-request="${lease.id}"] button.approve`, (b) => ({
          label: b.getAttribute('aria-label'),
          disabled: (b as HTMLButtonElement).disabled,
          text: b.textContent,
        })),
      ).toEqual({ label: `Approved by you: ${lease.title}`, disabled: true, text: 'Approved by you' });
      await audit('quorum-after-first', other);
      await screenshot(other, 'phone-quorum-first-approval');
      expect((await statusOf(lease.id)).status).toBe('pending');

      // The first phone sees the progress and who approved, then gives the second approval (with its passkey).
      await page.goto(`${origin}/app/#/requests/${lease.id}`, { waitUntil: 'networkidle2' });
      await page.waitForFunction(
        () => document.querySelector('#request .quorum-title')?.textContent?.includes('1 of 2'),
        { timeout: WAIT },
      );
      const approvers = await page.$$eval('#request .quorum-list li', (items) => items.map((li) => li.textContent));
      expect(approvers).toHaveLength(1);
      expect(approvers[0]).toMatch(/^Dana · /);
      await audit('quorum-request', page);
      await screenshot(page, 'phone-quorum-request');
      await page.locator(`#request [aria-label="Approve: ${lease.title}"]`).setTimeout(WAIT).click();
      await messageMatches(page, /Approved: Sign the new lease \(verified with your passkey\)/);
      expect(await statusOf(lease.id)).toMatchObject({ status: 'approved', resolved_by: 'biometric' });
      await listShows(other, []);
      await context.close();
    });

    it('every list has an empty state; the views pass the audit on a desktop screen too', async () => {
      const fresh = await api.newAccount();
      const context = await browser.createBrowserContext();
      const other = await deviceSession(context, fresh.device_id);
      // The default agent exists; remove it so the agents list is empty too.
      expect((await api.device(fresh.device_id).delete(`/agents/${fresh.agent_id}`)).status).toBe(200);
      const views: Array<[string, string, RegExp]> = [
        ['requests', '#pending-empty', /Nothing is waiting for you/],
        ['rules', '#rule-list .empty', /No rules/],
        ['limits', '#limit-list .empty', /No spending limits/],
        ['vault', '#credential-list .empty', /No credentials stored/],
        ['agents', '#agent-list .empty', /No agents/],
        ['history', '#history-list li', /No request has been resolved yet/],
      ];
      if (await other.$eval('#grants-tab', (a) => !a.hidden))
        views.push(['grants', '#grant-list .empty', /No standing grants/]);
      for (const [view, selector, text] of views) {
        await other.goto(`${origin}/app/#/${view}`, { waitUntil: 'networkidle2' });
        await other.waitForSelector(`${selector}:not([hidden])`, { visible: true, timeout: WAIT });
        expect(await other.$eval(selector, (n) => n.textContent)).toMatch(text);
        await audit(`empty-${view}`, other);
      }
      await screenshot(other, 'phone-empty-agents');
      await other.setViewport(DESKTOP);
      const agentKey = (await api.device(fresh.device_id).post('/agents', { name: 'office' })).body.api_key as string;
      const a = await createRequest({ action_type: 'scheduling', title: 'Book the meeting room' }, agentKey);
      const b = await createRequest(
        { action_type: 'legal', title: 'Sign the NDA', risk_level: 'critical', reversible: false },
        agentKey,
      );
      await other.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await listShows(other, [a.id, b.id]);
      await other.locator('#select-all').setTimeout(WAIT).click();
      await other.locator('#batch-approve').setTimeout(WAIT).click();
      await other.waitForSelector('#batch-review:not([hidden])', { timeout: WAIT });
      // A critical, irreversible request in a batch is flagged in the review.
      expect(await other.$eval(`[data-review="${b.id}"] .warning`, (p) => p.textContent)).toMatch(
        /critical risk and it cannot be undone/,
      );
      await audit('batch-review-desktop', other);
      await screenshot(other, 'desktop-batch-review');
      await context.close();
      expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
    });
  },
);
