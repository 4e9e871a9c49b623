import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

// A real browser for the device app's tests: the system's Chromium (Debian's `chromium` package), headless, with a
// fresh profile each run. Where there is none, the tests that need it are skipped with the reason.

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  Boolean,
) as string[];

/** The Chromium executable to drive, if this machine has one. */
export const chromiumPath: string | undefined = CANDIDATES.find((p) => existsSync(p));

/** Why browser tests cannot run here, or false when they can. */
export const noBrowser: string | false = chromiumPath
  ? false
  : 'no Chromium at /usr/bin/chromium (apt-get install chromium, or set CHROMIUM_PATH)';

/** Where screenshots are kept (ignored by git). */
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/device-app');

/** Starts headless Chromium with a fresh profile; close() also removes the profile. */
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'device-app-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromiumPath,
    headless: true,
    userDataDir: profile,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One accessibility violation as axe-core reports it, reduced to what a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules, and best practices) over the page as it is now. axe is evaluated
 * through the DevTools protocol, which the page's CSP does not govern, so the app keeps its strict policy.
 */
export async function axeAudit(page: Page): Promise<{ violations: AxeViolation[]; passes: number }> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<any> } }).axe.run(
      document,
      {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      },
    );
    return {
      passes: result.passes.length,
      violations: result.violations.map((v: any) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n: any) => n.target.join(' ')),
      })),
    };
  });
}

/** Saves a screenshot under test-artifacts/device-app/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Collects what goes wrong in a page into `problems`: its uncaught errors, and its console errors unless
 * `consoleErrors` is false (a page that logs refused requests on purpose). A test ends by expecting it empty.
 */
export function collectProblems(page: Page, problems: string[], options: { consoleErrors?: boolean } = {}): void {
  if (options.consoleErrors !== false)
    page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
  page.on('pageerror', (e) => void problems.push(String(e)));
}

export const PHONE = { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const DESKTOP = { width: 1280, height: 860, deviceScaleFactor: 1 };

/** Opens the device app at `origin` and signs in with the device id, waiting until its tabs show. */
export async function signIn(page: Page, options: { origin: string; deviceId: string; timeoutMs: number }) {
  await page.goto(`${options.origin}/app/`, { waitUntil: 'networkidle2' });
  await page.locator('#device-id').setTimeout(options.timeoutMs).fill(options.deviceId);
  await page.locator('#sign-in-form button[type=submit]').setTimeout(options.timeoutMs).click();
  await page.waitForSelector('#tabs:not([hidden])', { timeout: options.timeoutMs });
}

/**
 * Waits for an element's text to match `pattern`; on a time-out, the error says what the page showed instead (the
 * element, `#message`, `#error`) and the page's own problems the test collected (console errors, page errors).
 */
export function waitForText(
  page: Page,
  selector: string,
  pattern: RegExp,
  options: { timeoutMs: number; problems: readonly string[] },
) {
  return page
    .waitForFunction(
      (sel: string, source: string) => new RegExp(source).test(document.querySelector(sel)?.textContent ?? ''),
      { timeout: options.timeoutMs },
      selector,
      pattern.source,
    )
    .catch(async (err) => {
      const shown = await page.evaluate(
        (sel: string) =>
          [sel, '#message', '#error'].map((s) => `${s}: ${document.querySelector(s)?.textContent ?? '(none)'}`),
        selector,
      );
      throw new Error(`${err.message}; ${shown.join('; ')}; page problems: ${options.problems.join(' | ')}`);
    });
}
