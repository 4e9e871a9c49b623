import type { MemberRole } from '@agent-auth/contracts';
import type { ApiClient } from './http.js';

/** A member invited by a device of an owner or admin, and joined from a new device; its device id and member id. */
export async function inviteAndJoin(
  api: ApiClient,
  inviter: string,
  member: { name: string; role: MemberRole; email?: string },
): Promise<{ member_id: string; device_id: string }> {
  const invited = await api.device(inviter).post('/members', member);
  if (invited.status !== 200) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const joined = await api.call('POST', '/members/join', {
    body: { code: invited.body.invite.code, device_name: `${member.name}'s phone` },
  });
  if (joined.status !== 200) throw new Error(`join failed: ${joined.status} ${JSON.stringify(joined.body)}`);
  return { member_id: invited.body.member_id, device_id: joined.body.device_id };
}
