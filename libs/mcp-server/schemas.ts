// The output schemas the tools declare: what `structuredContent` of each successful result holds. Loose objects,
// so a field the service adds later passes through instead of failing the result.
import { z } from 'zod';

const STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;

/** An action request as the service returns it. */
export const ActionOutput = z.looseObject({
  id: z.string().describe('The request id (act_...).'),
  agent_id: z.string(),
  status: z
    .enum(STATUSES)
    .describe(
      'pending until the human answers; approved, denied or expired afterwards; cancelled when the agent withdrew it.',
    ),
  action_type: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  risk_level: z.string(),
  reversible: z.boolean(),
  amount: z.number().nullable(),
  currency: z.string(),
  recipient: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  content_hash: z.string().nullable(),
  rule_applied: z.string().nullable(),
  resolved_by: z
    .string()
    .nullable()
    .describe('Who or what decided: biometric, totp, wallet_pay, user, rule:..., spending_limit:..., system.'),
  resolved_at: z.string().nullable(),
  reason: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
});

/** request_approval: the request, and where the holder opens it. */
export const RequestApprovalOutput = ActionOutput.extend({
  approval_url: z.string().describe('The device app page of this request, for the human to open and answer.'),
});

export const HistoryOutput = z.object({ actions: z.array(ActionOutput) });

export const SpendingSummaryOutput = z.looseObject({
  agent_id: z.string(),
  summaries: z.array(
    z.looseObject({
      limit_id: z.string(),
      period: z.string(),
      limit: z.number(),
      spent: z.number(),
      remaining: z.number(),
      utilization: z.number(),
    }),
  ),
});

export const VaultServicesOutput = z.object({
  services: z.array(
    z.looseObject({
      service_name: z.string(),
      auth_type: z.string(),
      allowed_hosts: z.array(z.string()),
      description: z.string().nullable(),
    }),
  ),
});

export const ApiCallOutput = z.object({
  request_id: z.string(),
  executed: z.boolean().describe('True when the call was approved and made.'),
  action: ActionOutput.optional().describe(
    'The request, when the call was not made (not approved yet, denied or expired).',
  ),
  response: z
    .looseObject({ status_code: z.number(), headers: z.record(z.string(), z.string()), body: z.string() })
    .optional()
    .describe('The upstream response, when the call was made.'),
});
