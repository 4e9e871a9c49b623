import { hash } from 'node:crypto';

/** The challenge a passkey signs for a decision: base64url SHA-256 of the UTF-8 approval message. */
export function decisionChallenge(message: string): string {
  return hash('sha256', message, 'base64url');
}

/** The challenge a registration response answers, read before anything else in it is trusted. */
export function challengeOfClientData(clientDataJSON: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : undefined;
  } catch {
    return undefined;
  }
}
