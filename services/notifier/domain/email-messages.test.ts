import { describe, expect, it } from 'vitest';
import { escalationEmail, escapeHtml, inviteEmail, joinLink, requestLinkIn } from './email-messages.js';

describe('emails', () => {
  it('link into the device app: the join code in the fragment, a request by its id', () => {
    expect(joinLink('https://approve.example.com/', 'inv_ab+c')).toBe(
      'https://approve.example.com/app/#/join?code=inv_ab%2Bc',
    );
    expect(requestLinkIn('http://127.0.0.1:8080', 'act_1')).toBe('http://127.0.0.1:8080/app/#/requests/act_1');
  });

  it('write the invite in text and HTML, escaping what people typed and keeping the subject one line', () => {
    const link = joinLink('https://a.example', 'inv_x');
    const mail = inviteEmail({ name: 'Dana <b>\r\nBcc: x@y', link, expires_at: '2026-03-09T12:00:00.000Z' });
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.text).toContain(link);
    expect(mail.text).toContain('Mon, 09 Mar 2026 12:00:00 GMT');
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain('Dana &lt;b&gt;');
    expect(mail.html).not.toContain('<b>');
  });

  it('say what escalated, with its amount and the link to it', () => {
    const mail = escalationEmail({
      name: 'Ada',
      title: 'Laptop',
      amount: '$12.00',
      link: 'https://a/app/#/requests/act_1',
    });
    expect(mail.subject).toBe('Escalated to you: Laptop');
    expect(mail.text).toContain('Laptop ($12.00)');
    expect(mail.text).toContain('https://a/app/#/requests/act_1');
    expect(mail.html).toContain('href="https://a/app/#/requests/act_1"');
    expect(escapeHtml(`"'&`)).toBe('&quot;&#39;&amp;');
  });
});
