import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildActionRequest } from '../../libs/mcp-server/gate/action-request.js';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import {
  ARTIFACTS,
  PHONE,
  axeAudit,
  launchBrowser,
  noBrowser,
  type AxeViolation,
  signIn,
  collectProblems,
} from '../harness/browser.js';

// Coding agents' tool calls in the device app, in a real browser (headless Chromium) on a phone-sized screen: real
// hook calls (POST /hooks/claude-code and /hooks/codex, held until the holder answers) against a real stack, and
// the holder answering them in the app with its passkey: approve with changes (the hook's answer carries the edited
// input), deny with a note (the answer carries the note), allow for this session (a grant scoped to the tool, the
// session and the command's start), and a request its agent withdraws leaving the list at once. Screenshots of the
// phone go to test-artifacts/device-app/ (and to SCREENS_DIR when set).

const audits: Record<string, { violations: AxeViolation[]; passes: number }> = {};
/** Generous: CI runs the suite in parallel on two busy cores. */
const WAIT = 30_000;
const SCREENS = process.env.SCREENS_DIR;

/** Claude Code's (or Codex's) hook input for one tool call, as its hooks reference documents it. */
function hookInput(tool_name: string, tool_input: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    session_id: 'sess-7f3a2c',
    transcript_path: '/home/dev/.claude/projects/demo/sess-7f3a2c.jsonl',
    cwd: '/home/dev/demo',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name,
    tool_input,
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
    ...extra,
  };
}

describe.skipIf(noBrowser)(
  `device app: coding agents' tool calls in Chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`,
  { timeout: 120_000 },
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let apiBase: string;
    let origin: string;
    let browser: Browser;
    let closeBrowser: () => Promise<void>;
    let page: Page;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    const problems: string[] = [];
    /** The bodies the page sent to approve and deny, by request id. */
    const sent = new Map<string, Record<string, any>>();

    async function audit(name: string) {
      const result = await axeAudit(page);
      audits[name] = result;
      const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, `${name}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
    }

    /**
     * Screenshots of the phone: the whole page from the top, and the screen as the holder sees it with `at` scrolled
     * to just below the pinned header (the top of the page when none).
     */
    async function shoot(name: string, at?: string) {
      const dirs = SCREENS ? [ARTIFACTS, SCREENS] : [ARTIFACTS];
      for (const dir of dirs) mkdirSync(dir, { recursive: true });
      await page.evaluate(() => window.scrollTo(0, 0));
      for (const dir of dirs) await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
      if (at)
        await page.$eval(at, (n) =>
          window.scrollBy(0, n.getBoundingClientRect().top - document.querySelector('header')!.offsetHeight - 8),
        );
      for (const dir of dirs) await page.screenshot({ path: join(dir, `${name}-screen.png`) });
    }

    /** A hook call as the client makes it: POST with the agent key; resolves to the hook's answer once given. */
    const hook = (client: 'claude-code' | 'codex', body: unknown, signal?: AbortSignal, query = '') =>
      fetch(`${apiBase}/hooks/${client}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.api_key}` },
        body: JSON.stringify(body),
        signal,
      }).then(async (r) => {
        const text = await r.text();
        return { status: r.status, body: (text ? JSON.parse(text) : null) as any };
      });

    /** The pending request titled so, once the holder's list has it. */
    async function pendingTitled(title: string) {
      const deadline = Date.now() + WAIT;
      for (;;) {
        const list = (await api.device(acct.device_id).get('/pending')).body.requests as any[];
        const found = list.find((r) => r.title === title);
        if (found) return found as { id: string; title: string; content_hash: string; metadata: any };
        if (Date.now() > deadline) throw new Error(`"${title}" never reached the holder`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    const statusOf = async (id: string) => (await api.agent(acct.api_key).get(`/actions/${id}`)).body;

    /** Waits until the page's pending list shows exactly these request ids (in any order). */
    const listShows = (ids: string[]) =>
      page.waitForFunction(
        (want: string[]) => {
          const shown = [...document.querySelectorAll('#pending-list [data-request]')].map((n) =>
            n.getAttribute('data-request'),
          );
          return shown.length === want.length && want.every((id) => shown.includes(id));
        },
        { timeout: WAIT },
        ids,
      );

    const messageMatches = (pattern: RegExp) =>
      page.waitForFunction(
        (source: string) => new RegExp(source).test(document.getElementById('message')!.textContent!),
        { timeout: WAIT },
        pattern.source,
      );

    const text = (selector: string) => page.$eval(selector, (n) => n.textContent ?? '');

    /** Opens a request's page and waits for its heading. */
    async function openRequest(id: string) {
      await page.goto(`${origin}/app/#/requests/${id}`, { waitUntil: 'networkidle2' });
      await page.waitForSelector(`#request article[data-request="${id}"]`, { visible: true, timeout: WAIT });
    }

    /** Opens one of a tool call's own answers on its page. */
    async function openChoice(key: 'session' | 'edit' | 'deny') {
      await page.locator(`#request details[data-choice="${key}"] summary`).setTimeout(WAIT).click();
      await page.waitForSelector(`#request details[data-choice="${key}"][open]`, { timeout: WAIT });
    }

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app-tool-calls' });
      // WebAuthn needs a secure context and a domain: http://localhost is both.
      const base = new URL(stack.baseUrl);
      base.hostname = 'localhost';
      origin = base.origin;
      apiBase = base.href.replace(/\/$/, '');
      api = apiClient(apiBase);
      acct = await api.newAccount();
      ({ browser, close: closeBrowser } = await launchBrowser());
      page = await browser.newPage();
      await page.setViewport(PHONE);
      collectProblems(page, problems);
      page.on('request', (r) => {
        const decided = /\/actions\/([^/]+)\/(approve|deny)$/.exec(new URL(r.url()).pathname);
        if (decided && r.method() === 'POST')
          sent.set(decided[1]!, { decision: decided[2], ...JSON.parse(r.postData()!) });
      });
      const cdp: CDPSession = await page.createCDPSession();
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
    }, 180_000);

    afterAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      writeFileSync(join(ARTIFACTS, 'axe-summary-tool-calls.json'), JSON.stringify(audits, null, 1));
      await closeBrowser?.();
      await stack?.stop();
      await db?.drop();
    });

    it('signs in and sets up a passkey, which every answer below is then confirmed with', async () => {
      await signIn(page, { origin, deviceId: acct.device_id, timeoutMs: WAIT });
      await page.goto(`${origin}/app/#/device`, { waitUntil: 'networkidle2' });
      await page.waitForFunction(() => document.getElementById('passkey-state')!.textContent !== '', {
        timeout: WAIT,
      });
      await page.bringToFront();
      await page.locator('#add-passkey').setTimeout(WAIT).click();
      await page.waitForFunction(() => document.querySelectorAll('#passkey-list li').length === 1, { timeout: WAIT });
    });

    it('shows each call as what it is: the agent, the folder, the tool, the command or the file, the input in full', async () => {
      const calls = new AbortController();
      const bash = hook(
        'claude-code',
        hookInput('Bash', { command: 'npm test', description: 'Run the unit tests' }),
        calls.signal,
      );
      const edit = hook(
        'claude-code',
        hookInput('Edit', {
          file_path: '/home/dev/demo/src/server.ts',
          old_string: 'app.listen(3000);',
          new_string: "const port = Number(process.env.PORT ?? 3000);\napp.listen(port, '127.0.0.1');",
          replace_all: false,
        }),
        calls.signal,
      );
      const script = [
        'for f in src/*.ts; do',
        '  npx eslint "$f" --fix',
        'done',
        'git add -A',
        'git commit -m "Lint fixes"',
        'git push origin lint-fixes',
      ].join('\n');
      const codex = hook(
        'codex',
        hookInput('Bash', { command: script }, { session_id: '01a223f9-acf8', cwd: '/home/dev/app' }),
        calls.signal,
      );
      // The MCP gate's request for a held call, as the gate builds it.
      const mcpCall = buildActionRequest({
        server: 'filesystem',
        toolName: 'write_file',
        tool: { annotations: { destructiveHint: true } },
        arguments: { path: '/home/dev/notes/todo.md', content: '- ship the device app\n- write the docs\n' },
        expiresInSeconds: 600,
      });
      const mcp = (await api.agent(acct.api_key).post('/actions', mcpCall)).body as { id: string; title: string };
      const b = await pendingTitled('Run: npm test');
      const e = await pendingTitled('Edit /home/dev/demo/src/server.ts');
      const c = await pendingTitled(`Run: ${script.replace(/\s+/g, ' ')}`);

      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await listShows([b.id, e.id, c.id, mcp.id]);
      const card = (id: string) => text(`#pending-list [data-request="${id}"]`);
      expect(await card(b.id)).toMatch(/^Claude Code · .*Run: npm test.*Bash in \/home\/dev\/demo/);
      expect(await card(e.id)).toMatch(
        /^Claude Code · .*Edit \/home\/dev\/demo\/src\/server\.ts.*Edit in \/home\/dev\/demo/,
      );
      expect(await card(mcp.id)).toMatch(
        /^MCP: filesystem · .*MCP filesystem: write_file \/home\/dev\/notes\/todo\.md/,
      );
      // A script the one-line title cannot show as written: its first lines in monospace, and a link to the rest.
      expect(await card(c.id)).toMatch(/^Codex · /);
      expect(await text(`[data-request="${c.id}"] pre.command`)).toBe(script.split('\n').slice(0, 4).join('\n'));
      expect(await text(`[data-request="${c.id}"] .cut`)).toBe(
        'Shortened here (6 lines in all): read the whole command',
      );
      expect(await text(`[data-request="${b.id}"] .more a`)).toBe('More ways to answer');
      await audit('tool-calls-pending');
      await shoot('tool-calls-pending-list');

      await openRequest(b.id);
      expect(await text('#request-heading')).toBe('Run: npm test');
      expect(await text('#request .agent-name')).toBe('Claude Code');
      expect(await text('#request .tool-where')).toBe('Bash in /home/dev/demo');
      const facts = await text('#request .facts');
      for (const fact of ['Agent keydefault', 'Sessionsess-7f3a2c', `Content hash${b.content_hash}`])
        expect(facts).toContain(fact);
      expect(await text('#request pre.code.command')).toBe('npm test');
      expect(await text('#request .tool-input')).toContain('The agent says: Run the unit tests');
      const choices = await page.$$eval('#request details.choice summary', (s) => s.map((n) => n.textContent));
      expect(choices).toEqual(['Allow for this session…', 'Approve with changes…', 'Deny with a note…']);
      await openChoice('session');
      await audit('tool-call-bash');
      await shoot('tool-call-bash-request', '#request details[data-choice=session]');

      await openRequest(e.id);
      expect(await text('#request-heading')).toBe('Edit /home/dev/demo/src/server.ts');
      expect(await page.$$eval('#request .tool-input pre', (p) => p.map((n) => n.textContent))).toEqual([
        'app.listen(3000);',
        "const port = Number(process.env.PORT ?? 3000);\napp.listen(port, '127.0.0.1');",
      ]);
      expect(await text('#request .tool-input')).toMatch(/^Change in \/home\/dev\/demo\/src\/server\.tsReplace.*with/);
      await openChoice('edit');
      // The new text is what the holder edits.
      expect(await page.$eval('#request textarea[name=updated_input]', (t) => (t as HTMLTextAreaElement).value)).toBe(
        "const port = Number(process.env.PORT ?? 3000);\napp.listen(port, '127.0.0.1');",
      );
      await audit('tool-call-edit');
      await shoot('tool-call-edit-request', '#request .tool-input');

      await openRequest(c.id);
      expect(await text('#request pre.code.command')).toBe(script);
      await openRequest(mcp.id);
      expect(await text('#request .tool-input h3')).toBe('Arguments');
      expect(JSON.parse(await text('#request .tool-input pre'))).toEqual({
        path: '/home/dev/notes/todo.md',
        content: '- ship the device app\n- write the docs\n',
      });
      // The MCP gate runs the arguments it asked about: no editing them; its takes-care warning is shown.
      expect(await page.$$eval('#request details.choice summary', (d) => d.map((n) => n.textContent))).toEqual([
        'Allow this tool for a while…',
        'Deny with a note…',
      ]);
      expect(await text('#request .warning')).toMatch(/cannot be undone/);
      await audit('tool-call-mcp');
      await shoot('tool-call-mcp-request');

      // Withdrawn by their agents (the hooks' callers give up, the gate cancels its own), they leave the list.
      calls.abort();
      await Promise.allSettled([bash, edit, codex]);
      expect((await api.agent(acct.api_key).post(`/actions/${mcp.id}/cancel`)).status).toBe(200);
      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await page.waitForSelector('#pending-empty:not([hidden])', { timeout: WAIT });
    });

    it('approves with changes: after the second "yes" a force push needs, the hook answers with the edited command', async () => {
      const answer = hook(
        'claude-code',
        hookInput('Bash', { command: 'git push --force origin main', description: 'Push the fix' }),
      );
      const item = await pendingTitled('Run: git push --force origin main');
      await openRequest(item.id);
      await openChoice('edit');
      const field = '#request textarea[name=updated_input]';
      expect(await page.$eval(field, (t) => (t as HTMLTextAreaElement).value)).toBe('git push --force origin main');
      // Unchanged, it is not sent: the holder is told why.
      await page.locator('#request [aria-label^="Approve with these changes"]').setTimeout(WAIT).click();
      await page.waitForSelector('#request details[data-choice=edit] .error:not([hidden])', { timeout: WAIT });
      expect(await text('#request details[data-choice=edit] .error')).toMatch(/Nothing is changed yet/);
      expect(await page.$eval(field, (t) => t.getAttribute('aria-invalid'))).toBe('true');
      expect(sent.has(item.id)).toBe(false);

      await page.locator(field).setTimeout(WAIT).fill('git push origin fix-login');
      await page.locator('#request [aria-label^="Approve with these changes"]').setTimeout(WAIT).click();
      await page.waitForSelector('#request .confirm', { timeout: WAIT });
      expect(await text('#request .confirm-title')).toMatch(/^Approve this with your changes\? Take a second look:/);
      expect(sent.has(item.id)).toBe(false);
      await page.locator('#request [aria-label^="Yes, approve"]').setTimeout(WAIT).click();
      await messageMatches(
        /^Approved with your changes: Run: git push --force origin main \(verified with your passkey\)/,
      );

      const edited = { command: 'git push origin fix-login', description: 'Push the fix' };
      expect((await answer).body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'allow',
          permissionDecisionReason: 'Approved by the holder (biometric)',
          updatedInput: edited,
        },
      });
      expect(sent.get(item.id)).toMatchObject({
        decision: 'approve',
        content_hash: item.content_hash,
        updated_input: edited,
        webauthn: expect.any(Object),
        timestamp: expect.any(String),
      });
      expect(await statusOf(item.id)).toMatchObject({ status: 'approved', user_verified: true, updated_input: edited });
    });

    it("denies with a note: the hook's answer carries it to the model", async () => {
      const answer = hook(
        'claude-code',
        hookInput('Write', { file_path: '/home/dev/demo/.env', content: 'DATABASE_URL=postgres://prod-db/app\n' }),
      );
      const item = await pendingTitled('Write /home/dev/demo/.env');
      await openRequest(item.id);
      expect(await text('#request .tool-input')).toContain('DATABASE_URL=postgres://prod-db/app');
      await openChoice('deny');
      const note = 'Never point the local .env at production; use the docker compose database.';
      await page.locator('#request textarea[name=reason]').setTimeout(WAIT).fill(note);
      expect(await text('#request details[data-choice=deny] .counter')).toBe(`${note.length} / 500`);
      await page.locator('#request [aria-label^="Deny with this note"]').setTimeout(WAIT).click();
      await messageMatches(
        /^Denied: Write \/home\/dev\/demo\/\.env \(verified with your passkey\) — your note goes to the agent/,
      );
      expect((await answer).body).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: `Denied by the holder: ${note}`,
        },
      });
      expect(sent.get(item.id)).toMatchObject({ decision: 'deny', reason: note, webauthn: expect.any(Object) });
    });

    it('allows for this session: approves with a grant for this tool, session and command start', async () => {
      const answer = hook('claude-code', hookInput('Bash', { command: 'npm test -- --run src/app.test.ts' }));
      const item = await pendingTitled('Run: npm test -- --run src/app.test.ts');
      await openRequest(item.id);
      await openChoice('session');
      const prefix = '#request input[name=command_prefix]';
      expect(await page.$eval(prefix, (i) => (i as HTMLInputElement).value)).toBe('npm test');
      expect(await page.$eval('#request select[name=session_duration]', (s) => (s as HTMLSelectElement).value)).toBe(
        String(8 * 3600),
      );
      await page.locator('#request [aria-label^="Approve and allow for this session"]').setTimeout(WAIT).click();
      await messageMatches(
        /^Approved: Run: npm test -- --run src\/app\.test\.ts \(verified with your passkey\) — Bash commands starting with “npm test” in this session allowed for 8 hours/,
      );
      expect((await answer).body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
      const match = { tool_name: 'Bash', session_id: 'sess-7f3a2c', command_prefix: 'npm test' };
      expect(sent.get(item.id)).toMatchObject({
        decision: 'approve',
        content_hash: item.content_hash,
        grant: { duration_seconds: 8 * 3600, match },
        webauthn: expect.any(Object),
      });

      const grants = (await api.device(acct.device_id).get('/grants')).body.grants as any[];
      expect(grants).toHaveLength(1);
      expect(grants[0]).toMatchObject({ agent_id: acct.agent_id, action_type: 'system', created_from: item.id });
      const hours = (Date.parse(grants[0].expires_at) - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(7.9);
      expect(hours).toBeLessThanOrEqual(8);
      expect(grants[0].match).toEqual(match);
      // The same command start in the same session is approved by the grant at once; anything else still asks.
      const again = await hook('claude-code', hookInput('Bash', { command: 'npm test -- --run src/db.test.ts' }));
      expect(again.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });
      const publish = await hook('claude-code', hookInput('Bash', { command: 'npm publish' }), undefined, '?timeout=1');
      expect(publish.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
      const elsewhere = await hook(
        'claude-code',
        hookInput('Bash', { command: 'npm test' }, { session_id: 'sess-other' }),
        undefined,
        '?timeout=1',
      );
      expect(elsewhere.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });

      await page.goto(`${origin}/app/#/grants`, { waitUntil: 'networkidle2' });
      const card = `[data-grant="${grants[0].grant_id}"]`;
      await page.waitForSelector(card, { timeout: WAIT });
      expect(await text(card)).toContain('OnlyBash · session sess-7f3a2c · commands starting with “npm test”');
      expect(await text(card)).toContain('1 use, no cap');
      await audit('grants-session');
    });

    it('a request its agent withdraws leaves the list at once, says so on its page, and shows in the history', async () => {
      const gone = new AbortController();
      const stays = new AbortController();
      const first = hook('claude-code', hookInput('Bash', { command: 'make release' }), gone.signal).catch(() => null);
      const second = hook('claude-code', hookInput('Bash', { command: 'make docs' }), stays.signal).catch(() => null);
      const release = await pendingTitled('Run: make release');
      const docs = await pendingTitled('Run: make docs');
      await page.goto(`${origin}/app/#/requests`, { waitUntil: 'networkidle2' });
      await listShows([release.id, docs.id]);

      // Claude Code gives up on the call (its hook timed out, or the user pressed Esc): the request is cancelled.
      gone.abort();
      await first;
      const started = Date.now();
      await listShows([docs.id]);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await text('#pending-count')).toBe('(1)');
      await messageMatches(/^Claude Code withdrew "Run: make release": there is nothing to decide\./);
      expect(await statusOf(release.id)).toMatchObject({ status: 'cancelled', resolved_by: 'agent' });

      // Watched from its own page, the request says what became of it.
      await openRequest(docs.id);
      stays.abort();
      await second;
      await page.waitForFunction(
        () => /Cancelled by the agent/.test(document.getElementById('request-body')!.textContent!),
        { timeout: WAIT },
      );
      expect(await text('#request-body')).toMatch(/^This request is not waiting any more\.Cancelled by the agent/);
      await audit('tool-call-cancelled');

      await page.goto(`${origin}/app/#/history`, { waitUntil: 'networkidle2' });
      await page.waitForSelector(`#history-list [data-request="${release.id}"]`, { timeout: WAIT });
      expect(await text(`#history-list [data-request="${release.id}"]`)).toMatch(
        /^Cancelled: system.*Cancelled by the agent✓ Receipt verified/,
      );
      await shoot('tool-calls-history');
      expect(problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
    });
  },
);
