import { z } from 'zod';

/** A grant's match: it approves only tool calls of this tool, in this session, whose command starts so (null: any). */
export const GrantMatchView = z.object({
  tool_name: z.string().nullable(),
  session_id: z.string().nullable(),
  command_prefix: z.string().nullable(),
});
export type GrantMatchView = z.infer<typeof GrantMatchView>;

/** A standing grant as GET /grants shows it: amounts in the grant's currency, in dollars. */
export const GrantView = z.object({
  grant_id: z.string(),
  agent_id: z.string(),
  action_type: z.string(),
  recipient: z.string().nullable(),
  currency: z.string(),
  expires_at: z.string(),
  max_amount: z.number().nullable(),
  spent: z.number(),
  max_uses: z.number().int().nullable(),
  uses: z.number().int(),
  /** Null for a grant that approves any request its scope covers. */
  match: GrantMatchView.nullable(),
  revoked_at: z.string().nullable(),
  /** The request whose approval created the grant. */
  created_from: z.string(),
  created_at: z.string(),
});
export type GrantView = z.infer<typeof GrantView>;

export const GrantList = z.object({ grants: z.array(GrantView) });
export type GrantList = z.infer<typeof GrantList>;
