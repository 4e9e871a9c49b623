import { createHash } from 'node:crypto';
import {
  AGENT_ACTION_TYPE,
  type ActionView,
  type ApprovedActionDetail,
  BINDING_MESSAGE_KEY,
  cibaLimits,
} from '@agent-auth/contracts';
import { isInsecureHostAllowed } from '@agent-auth/config';
import { errors } from '@agent-auth/errors';

/** How long the tokens of an approved CIBA request are good for. */
export const CIBA_TOKEN_TTL_SECONDS = 300;

/** A stored CIBA request (actions.ciba_requests) as a poll reads it. */
export interface CibaRequestRow {
  auth_req_id: string;
  action_id: string;
  agent_id: string;
  account_id: string;
  mode: 'poll' | 'ping';
  interval_seconds: number;
  notification_token_enc: string | null;
  expires_at: Date;
  issued_at: Date | null;
  /** The poll before this one came sooner than the interval allows (set by the poll that reads the row). */
  too_fast?: boolean;
}

/** Checks an agent's ping endpoint: https (http only to a configured development host), absolute, no fragment. */
export function checkNotificationEndpoint(settings: { ALLOW_INSECURE_HOSTS: string[] }, endpoint: string): void {
  if (!URL.canParse(endpoint)) throw errors.notificationEndpointNotHttps();
  const url = new URL(endpoint);
  if (url.hash || endpoint.includes('#')) throw errors.notificationEndpointNotHttps();
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isInsecureHostAllowed(settings, url.hostname)) return;
  throw errors.notificationEndpointNotHttps();
}

/** A poll of a request that is not approved (yet) is answered with the CIBA error its status stands for. */
export function checkApproved(status: ActionView['status'], tooFast: boolean, interval: number): void {
  if (status === 'approved') return;
  if (status === 'pending') throw tooFast ? errors.cibaSlowDown(interval) : errors.cibaAuthorizationPending();
  if (status === 'expired') throw errors.cibaExpiredToken();
  throw errors.cibaAccessDenied(status);
}

/**
 * The `authorization_details` entry the tokens carry: the request as the holder approved it, the binding message
 * left out (it is the request's caption, not its content), an edited tool input in place of the asked one.
 */
export function approvedDetailOf(action: ActionView): ApprovedActionDetail {
  const { [BINDING_MESSAGE_KEY]: _caption, ...metadata } = action.metadata;
  if (action.updated_input) metadata.tool_input = action.updated_input;
  return {
    type: AGENT_ACTION_TYPE,
    action_type: action.action_type,
    title: action.title,
    ...(action.description === null ? {} : { description: action.description }),
    ...(action.amount === null ? {} : { amount: action.amount, currency: action.currency }),
    ...(action.recipient === null ? {} : { recipient: action.recipient }),
    risk_level: action.risk_level,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    action_id: action.id,
  };
}

/** OpenID Connect's at_hash: the left half of the SHA-256 of the access token, base64url (ES256 hashes with SHA-256). */
export function leftHalfHash(token: string): string {
  const digest = createHash('sha256').update(token, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface TokenFacts {
  issuer: string;
  clientId: string;
  /** The account's holder: the account id. */
  subject: string;
  authReqId: string;
  action: ActionView;
  /** Seconds since the epoch. */
  now: number;
  jti: string;
}

/** The access token's claims (RFC 9068 with RFC 9396's authorization_details), for a resource server to verify. */
export function accessTokenClaims(f: TokenFacts, details: ApprovedActionDetail[]) {
  return {
    iss: f.issuer,
    aud: f.clientId,
    sub: f.subject,
    client_id: f.clientId,
    iat: f.now,
    exp: f.now + CIBA_TOKEN_TTL_SECONDS,
    jti: f.jti,
    scope: 'openid',
    authorization_details: details,
    action_id: f.action.id,
  };
}

/** The ID token's claims (CIBA 10.1.1): who approved, when, for which auth_req_id, bound to the access token. */
export function idTokenClaims(f: TokenFacts, accessToken: string) {
  const decidedAt = f.action.resolved_at ? Math.floor(Date.parse(f.action.resolved_at) / 1000) : f.now;
  return {
    iss: f.issuer,
    aud: f.clientId,
    sub: f.subject,
    iat: f.now,
    exp: f.now + CIBA_TOKEN_TTL_SECONDS,
    auth_time: decidedAt,
    at_hash: leftHalfHash(accessToken),
    'urn:openid:params:jwt:claim:auth_req_id': f.authReqId,
  };
}

/** The interval after a poll: grown by the slow_down step when the poll came too soon. */
export const nextInterval = (interval: number, tooFast: boolean) =>
  tooFast ? interval + cibaLimits.slowDownStep : interval;
