/** An email as it goes out: plain text and HTML alike. */
export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text made safe inside HTML (names and titles are anyone's words). */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Subjects are one line: a name or title with a line break in it would start the message's headers over. */
const oneLine = (text: string, max = 120): string => text.replace(/[\r\n\t]+/g, ' ').slice(0, max);

/** Where a device app served at `origin` opens: `<origin>/app/#/<route>`. */
export function appLink(origin: string, route: string): string {
  return `${origin.replace(/\/+$/, '')}/app/#/${route}`;
}

/** The device app's join link of an invite: the code is in the fragment, which a browser never sends to a server. */
export function joinLink(origin: string, code: string): string {
  return appLink(origin, `join?code=${encodeURIComponent(code)}`);
}

/** The device app's link to one request. */
export function requestLinkIn(origin: string, requestId: string): string {
  return appLink(origin, `requests/${encodeURIComponent(requestId)}`);
}

const html = (paragraphs: string[], link: { href: string; label: string }) =>
  `<!doctype html><html><body style="font-family:sans-serif">${paragraphs.map((p) => `<p>${p}</p>`).join('')}` +
  `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p></body></html>`;

/** The invite: who it is for, the link that joins a phone (single use), and until when. */
export function inviteEmail(input: { name: string; link: string; expires_at: string }): EmailMessage {
  const expires = new Date(input.expires_at).toUTCString();
  const lines = [
    `Hello ${input.name},`,
    'You are invited to answer approval requests with Agent Auth.',
    `Open this link on your phone to join (it works once, until ${expires}):`,
  ];
  return {
    subject: oneLine(`You are invited to approve requests: ${input.name}`),
    text: `${lines.join('\n\n')}\n\n${input.link}\n\nIf you did not expect this, ignore this email.\n`,
    html: html([...lines.map(escapeHtml), 'If you did not expect this, ignore this email.'], {
      href: input.link,
      label: 'Join on this phone',
    }),
  };
}

/** The escalation: which request waits, and the link to it in the app (answering still takes the device). */
export function escalationEmail(input: {
  name: string;
  title: string;
  amount: string | null;
  link: string;
}): EmailMessage {
  const what = input.amount ? `${input.title} (${input.amount})` : input.title;
  const lines = [
    `Hello ${input.name},`,
    `A request was not answered in time and is now yours to answer as well: ${what}.`,
    'Open it in the app on your device to approve or deny it:',
  ];
  return {
    subject: oneLine(`Escalated to you: ${input.title}`),
    text: `${lines.join('\n\n')}\n\n${input.link}\n`,
    html: html(lines.map(escapeHtml), { href: input.link, label: 'Open the request' }),
  };
}
