import type { FastifyInstance } from 'fastify';
import {
  actionsEndpoints as ep,
  CreateMemberBody,
  JoinBody,
  MemberParams,
  memberChangeOf,
  newMemberOf,
  UpdateMemberBody,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';
import { publicOriginOf } from './public-origin.js';

/** The account's members: a team of people, each with a role and their own devices. */
export function memberRoutes(app: FastifyInstance, bus: Bus, publicBaseUrl?: string): void {
  addRoute(app, {
    method: 'POST',
    url: '/members',
    tag: 'Accounts',
    summary: 'Invite a member',
    description:
      'Adds a person to the account with a role (`owner`, `admin`, `approver`, `auditor`): `{name, email?, role}`. ' +
      'Answers `{member_id, invite: {code, expires_at}}`; the code, shown only here, lets one device join as the ' +
      'member (`POST /members/join`) within 7 days. Only an owner invites an owner. With an `email` (and SMTP_URL ' +
      'set), the invite is also emailed: a link into the device app that joins with the code.',
    auth: 'device',
    body: CreateMemberBody,
    response: ep.createMember.response,
    // The app's origin goes with it, for the invite's email link (the notifier emails it when SMTP_URL is set).
    handler: ({ principal, body, requestId, request }) =>
      bus.request(ep.createMember, newMemberOf(principal, body, publicOriginOf(request, publicBaseUrl)), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/members/join',
    tag: 'Accounts',
    summary: 'Join with an invite',
    description:
      "A new device joins the member an invite names: `{code, device_name?}`. Answers `{device_id}`, the device's " +
      'credential, shown only here. No authentication; counted against the per-IP rate limit. Each code lets one ' +
      'device join: 404 for an unknown code, 409 for one used or expired.',
    auth: 'none',
    body: JoinBody,
    response: ep.joinMember.response,
    handler: ({ body, requestId }) =>
      bus.request(ep.joinMember, { code: body.code, device_name: body.device_name ?? null }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/members',
    tag: 'Accounts',
    summary: 'List members',
    description:
      "The account's members: `{members: [{member_id, name, email, role, devices, invite_pending, created_at}]}`.",
    auth: 'device',
    response: ep.listMembers.response,
    handler: ({ principal, requestId }) => bus.request(ep.listMembers, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'PATCH',
    url: '/members/:member_id',
    tag: 'Accounts',
    summary: 'Change a member',
    description:
      "Changes a member's `name`, `email` or `role`. A new role applies to their devices at once, on every " +
      'gateway. Only an owner makes or changes an owner; the last owner keeps the role (409 `last_owner`).',
    auth: 'device',
    params: MemberParams,
    body: UpdateMemberBody,
    response: ep.updateMember.response,
    handler: ({ principal, params, body, requestId }) =>
      bus.request(ep.updateMember, memberChangeOf(principal, params.member_id, body), { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/members/:member_id',
    tag: 'Accounts',
    summary: 'Remove a member',
    description:
      'Removes a member: their devices stop working at once, on every gateway, and their unused invite with them. ' +
      'Only an owner removes an owner; the last owner stays (409 `last_owner`).',
    auth: 'device',
    params: MemberParams,
    response: ep.removeMember.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.removeMember, { device: principal, member_id: params.member_id }, { requestId }),
  });
}
