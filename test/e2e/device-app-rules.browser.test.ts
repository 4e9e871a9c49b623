import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import {
  ARTIFACTS,
  PHONE,
  axeAudit,
  launchBrowser,
  noBrowser,
  signIn,
  waitForText,
  collectProblems,
} from '../harness/browser.js';

// The Rules view in a real browser (headless Chromium) on a phone-sized screen, against a real stack with a real
// history: a rule with conditions built field by field and read back as a sentence, its replay over the last 30 days
// shown before it can be saved, a suggestion from the history adopted with one tap, and the Cedar policies listed.
// Screenshots go to test-artifacts/device-app/.

/** Generous: the suite runs in parallel on two busy cores. */
const WAIT = 60_000;

describe.skipIf(noBrowser)(
  `device app: rules people can say, in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  { timeout: 240_000 },
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

    const text = (selector: string) => page.$eval(selector, (n) => n.textContent ?? '');
    /** Sets a field's value as typing it would, at once (typing key by key lags on a loaded machine). */
    const fillIn = (selector: string, value: string) =>
      page.$eval(
        selector,
        (n, v) => {
          (n as HTMLInputElement).value = v;
          n.dispatchEvent(new Event('input', { bubbles: true }));
        },
        value,
      );
    /** Waits for an element's text to match; on a time-out, says what the page showed instead. */
    const textMatches = (selector: string, pattern: RegExp) =>
      waitForText(page, selector, pattern, { timeoutMs: WAIT, problems });

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app-rules' });
      origin = new URL(stack.baseUrl).origin;
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      const device = api.device(acct.device_id);
      // A history: six Read calls a person approved, and mail that waits.
      for (let i = 0; i < 6; i++) {
        const created = await api
          .agent(acct.api_key)
          .post('/actions', { action_type: 'data_access', title: `Read notes ${i}`, metadata: { tool_name: 'Read' } });
        await device.post(`/actions/${created.body.id}/approve`);
      }
      for (const to of ['ana@ourcompany.com', 'bo@ourcompany.com', 'eve@elsewhere.com'])
        await api
          .agent(acct.api_key)
          .post('/actions', { action_type: 'communication', title: `Mail ${to}`, recipient: to });
      await device.post('/policies', {
        name: 'no sandbox purchases',
        cedar:
          'forbid(principal, action == Action::"purchase", resource) when { context.metadata.hasTag("env") && context.metadata.getTag("env") == "sandbox" };',
      });
      ({ browser, close: closeBrowser } = await launchBrowser());
      page = await browser.newPage();
      await page.setViewport(PHONE);
      collectProblems(page, problems);
      await signIn(page, { origin, deviceId: acct.device_id, timeoutMs: WAIT });
    }, 180_000);

    afterAll(async () => {
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('builds a rule with conditions, reads it back as a sentence, and saves it only after its replay', async () => {
      await page.goto(`${origin}/app/#/rules`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('#rules:not([hidden])', { timeout: WAIT });
      await fillIn('#rule-form input[name=name]', 'mail to colleagues');
      await page.select('#rule-form select[name=action_type]', 'communication');
      await page.locator('#add-condition').click();
      await page.select('#condition-list li:nth-child(1) select[aria-label=Field]', 'recipient');
      await page.select('#condition-list li:nth-child(1) select[aria-label=Operator]', 'suffix');
      await fillIn('#condition-list li:nth-child(1) input[aria-label=Value]', '@ourcompany.com');
      await textMatches(
        '#rule-sentence',
        /^Approve communication requests when recipient ends with “@ourcompany.com”$/,
      );
      expect(await page.$eval('#rule-save', (b) => (b as HTMLButtonElement).disabled)).toBe(true);

      await page.locator('#rule-preview').click();
      await textMatches('#rule-replay', /Would have approved 2 of the last 30 days' 9 requests/);
      expect(await page.$$eval('#rule-replay .changes li', (ls) => ls.map((l) => l.textContent))).toEqual([
        'Mail bo@ourcompany.com: left to you → approved at once (it is waiting)',
        'Mail ana@ourcompany.com: left to you → approved at once (it is waiting)',
      ]);
      // Any change makes the replay stale: save waits for the new one.
      await fillIn('#condition-list li:nth-child(1) input[aria-label=Value]', '@ourcompany.co');
      await page.waitForFunction(() => (document.getElementById('rule-save') as HTMLButtonElement).disabled, {
        timeout: WAIT,
      });
      await fillIn('#condition-list li:nth-child(1) input[aria-label=Value]', '@ourcompany.com');
      await page.locator('#rule-preview').click();
      await page.waitForFunction(() => !(document.getElementById('rule-save') as HTMLButtonElement).disabled, {
        timeout: WAIT,
      });
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'rules-replay.png'), fullPage: true });
      await page.locator('#rule-save').click();
      await textMatches('#rule-list', /mail to colleagues: Approve communication requests when recipient ends with/);
      const { rules } = (await api.device(acct.device_id).get('/rules')).body;
      expect(rules).toMatchObject([
        {
          name: 'mail to colleagues',
          decision: 'auto_approve',
          action_type: 'communication',
          conditions: [{ field: 'recipient', op: 'suffix', value: '@ourcompany.com' }],
        },
      ]);
      const mail = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'communication', title: 'Mail cy', recipient: 'cy@ourcompany.com' });
      expect(mail.body.status).toBe('approved');
    });

    it('offers the rules the history implies, adopted with one tap, and lists the Cedar policies', async () => {
      await page.goto(`${origin}/app/#/limits`, { waitUntil: 'networkidle2' });
      await page.goto(`${origin}/app/#/rules`, { waitUntil: 'networkidle2' });
      await textMatches('#suggestion-list', /6 of 6 Read calls of .* approved by a person in 30 days/);
      expect(await text('#suggestion-list .sentence')).toMatch(
        /^Approve data_access requests of .* when tool is “Read”/,
      );
      // Today's rule approves the mail to colleagues already; the suggestion changes the six Read calls.
      await textMatches(
        '#suggestion-list .replay-summary',
        /^Would have approved 9 of the last 30 days' 10 requests, denied 0 and left 1 to you; it changes 6\.$/,
      );
      expect(await text('#policy-list')).toContain('no sandbox purchases');
      expect(await text('#policy-list pre')).toContain('forbid(principal, action == Action::"purchase"');
      const audit = await axeAudit(page);
      const serious = audit.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, JSON.stringify(serious, null, 1)).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'rules-suggestions.png'), fullPage: true });

      await page.locator('#suggestion-list button.approve').click();
      await textMatches('#message', /^Rule added: Approve Read calls of /);
      await page.waitForFunction(() => document.getElementById('suggestions')!.hidden, { timeout: WAIT });
      const read = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'data_access', title: 'Read more', metadata: { tool_name: 'Read' } });
      expect(read.body.status).toBe('approved');
      expect(problems).toEqual([]);
    });
  },
);
