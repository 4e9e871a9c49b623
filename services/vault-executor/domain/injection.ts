import type { AuthType } from '@agent-auth/contracts';

/** The header a credential is sent in, and its value, by the credential's auth_type. */
export function credentialHeader(auth: { auth_type: AuthType; auth_header: string }, secret: string): [string, string] {
  switch (auth.auth_type) {
    case 'bearer':
      return ['authorization', `Bearer ${secret}`];
    case 'basic':
      return ['authorization', `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`];
    case 'api_key':
    case 'custom':
      return [auth.auth_header.toLowerCase(), secret];
  }
}

/**
 * The headers of the outbound call: the agent's own, minus any that would set or shadow the credential header
 * (whatever its case), plus the credential. The agent can never choose what the credential header carries.
 */
export function injectCredential(
  agentHeaders: Record<string, string>,
  header: [string, string],
): Record<string, string> {
  const [name, value] = header;
  const kept = Object.entries(agentHeaders).filter(([k]) => k.toLowerCase() !== name);
  return { ...Object.fromEntries(kept.map(([k, v]) => [k.toLowerCase(), v])), [name]: value };
}

/** Every form in which a credential could come back from an upstream that echoes what it was sent. */
export function secretForms(secret: string): string[] {
  const forms = [
    secret,
    Buffer.from(secret, 'utf8').toString('base64'),
    Buffer.from(secret, 'utf8').toString('base64url'),
    encodeURIComponent(secret),
    JSON.stringify(secret).slice(1, -1),
  ];
  // Derived forms shorter than 4 characters would mangle unrelated text; the raw value is always redacted.
  // Longest first, so a longer form is replaced whole before a shorter one inside it.
  return [...new Set(forms)].filter((f) => f === secret || f.length >= 4).sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of any of the forms in a text. */
export function redact(text: string, forms: string[]): string {
  let out = text;
  for (const form of forms) out = out.split(form).join('[redacted]');
  return out;
}
