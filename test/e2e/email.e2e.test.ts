import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

// Email over SMTP against a real SMTP server on loopback: invites (the join link) and escalations (the link to the
// request), plain text and HTML, a send the server first refuses tried again; the password and the invite code
// never in a log. Through the vault executor (the default) over NATS, and sent by the process itself (direct).
const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; via: 'vault-executor' | 'direct'; skip: string | false }> = [
  { mode: 'processes', via: 'vault-executor', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', via: 'direct', skip: false },
];
const PASSWORD = 'smtp-pass-9f3k2';
const PUBLIC = 'http://approvals.test';

/** A real SMTP server on loopback that wants a login, refuses the first `refuse` messages (451), and keeps the rest. */
async function startSmtp(options: { refuse: number }) {
  const received: ParsedMail[] = [];
  const attempts: string[] = [];
  let refused = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'mailer' && auth.password === PASSWORD) cb(null, { user: 'mailer' });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        attempts.push(session.envelope.rcptTo.map((r) => r.address).join(','));
        if (refused < options.refuse) {
          refused++;
          const err = new Error('Try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          cb(err);
          return;
        }
        received.push(await simpleParser(Buffer.concat(chunks)));
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://mailer:${PASSWORD}@127.0.0.1:${port}`,
    received,
    attempts,
    async next(to: string, subject = /./, timeoutMs = 20_000): Promise<ParsedMail> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = received.find((m) => JSON.stringify(m.to).includes(to) && subject.test(m.subject ?? ''));
        if (found) return found;
        await sleep(100);
      }
      throw new Error(`no email to ${to} in ${timeoutMs} ms`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const { mode, via, skip } of modes) {
  describe.skipIf(skip)(`email over SMTP (${mode}, ${via}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let smtp: Awaited<ReturnType<typeof startSmtp>>;

    beforeAll(async () => {
      db = await createTestDatabase();
      smtp = await startSmtp({ refuse: 1 });
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'email',
        env: {
          SMTP_URL: smtp.url,
          EMAIL_FROM: 'Approvals <approvals@example.com>',
          EMAIL_RETRY_SCHEDULE: '1,1,1',
          OUTBOUND_VIA: via,
          PUBLIC_BASE_URL: `${PUBLIC}/api/v1`,
        },
      });
      api = apiClient(stack.baseUrl);
    }, 120_000);
    afterAll(async () => {
      await stack?.stop();
      await smtp?.close();
      await db?.drop();
    });

    it('emails an invite with the join link, tried again after the server first refused it', async () => {
      const acct = await api.newAccount();
      const invited = await api.device(acct.device_id).post('/members', {
        name: 'Dana <Finance>',
        email: 'dana@example.com',
        role: 'approver',
      });
      expect(invited.status, JSON.stringify(invited.body)).toBe(200);
      const code = invited.body.invite.code as string;
      const mail = await smtp.next('dana@example.com');
      expect(smtp.attempts.filter((a) => a === 'dana@example.com').length).toBe(2);
      expect(mail.from?.text).toBe('"Approvals" <approvals@example.com>');
      expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('dana@example.com');
      expect(mail.subject).toBe('You are invited to approve requests: Dana <Finance>');
      const link = `${PUBLIC}/app/#/join?code=${code}`;
      expect(mail.text).toContain(link);
      expect(mail.html).toContain(`href="${link}"`);
      expect(mail.html).toContain('Dana &lt;Finance&gt;');
      // The link joins a phone once.
      const joined = await api.call('POST', '/members/join', { body: { code, device_name: 'phone' } });
      expect(joined.status).toBe(200);
      const logs = stack.logs();
      expect(logs).toContain('email on: invites and escalations');
      expect(logs).not.toContain(code);
      expect(logs).not.toContain(code.slice(4));
      expect(logs).not.toContain(PASSWORD);
    }, 60_000);

    it('emails the people a request escalated to, with the link to it', async () => {
      const acct = await api.newAccount();
      const dana = await inviteAndJoin(api, acct.device_id, { name: 'Dana', role: 'approver' });
      await inviteAndJoin(api, acct.device_id, { name: 'Ada', role: 'admin', email: `ada-${mode}@example.com` });
      const rule = await api.device(acct.device_id).post('/rules', {
        name: 'finance',
        decision: 'ask',
        approvers: [dana.member_id],
        escalate_after_seconds: 5,
        escalate_to: ['role:admin'],
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);
      const req = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'Laptop', amount: 12 });
      expect(req.body.status).toBe('pending');
      const mail = await smtp.next(`ada-${mode}@example.com`, /^Escalated/);
      expect(mail.subject).toBe('Escalated to you: Laptop');
      const link = `${PUBLIC}/app/#/requests/${req.body.id}`;
      expect(mail.text).toContain(link);
      expect(mail.text).toContain('Laptop ($12.00)');
      expect(mail.html).toContain(`href="${link}"`);
      // One escalation email only, to Ada (Dana has no email address).
      await sleep(1_500);
      const escalations = smtp.received.filter((m) => m.subject === 'Escalated to you: Laptop');
      expect(escalations.map((m) => (m.to && 'text' in m.to ? m.to.text : ''))).toEqual([`ada-${mode}@example.com`]);
    }, 60_000);
  });
}
