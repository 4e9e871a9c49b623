import { actionsEndpoints as ep, newId, riskRank, vaultContentHash, VaultExecutionMetadata, describeZodError, type CreateActionBody } from '@agent-auth/contracts';
import { checkCallbackUrl } from '@agent-auth/config';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { RequestRow } from '../store/rows.js';
import type { ActionsDeps } from './deps.js';
import { toCents } from './amounts.js';
import { toActionView } from './views.js';
import { quotaExceededDetail } from './accounts.js';

/** The content hash of a vault execution request, or null for any other request. */
function contentHashOf(body: CreateActionBody): string | null {
  if (body.metadata?.['vault_execute'] !== true) return null;
  if (body.action_type !== 'system') throw errors.badRequest("action_type: must be 'system' for a vault execution request");
  const parsed = VaultExecutionMetadata.safeParse(body.metadata);
  if (!parsed.success) throw errors.badRequest(describeZodError(parsed.error, 'metadata').replace(/^/, 'metadata.'));
  return vaultContentHash(parsed.data);
}

/** Decrypts a request's metadata (bound to its id, so a ciphertext cannot be moved to another request). */
export function metadataOf(deps: ActionsDeps, row: Pick<RequestRow, 'id' | 'metadata_enc'>): Record<string, unknown> {
  if (!row.metadata_enc) return {};
  return JSON.parse(deps.keyring.decrypt(row.metadata_enc, `request:${row.id}:metadata`)) as Record<string, unknown>;
}

/** What the audit keeps of an automatic decision: the rule, or the limit figures that were exceeded. */
function decisionDetail(decision: { rule_applied: string | null; spending_limit_exceeded?: unknown }): Record<string, unknown> {
  return decision.spending_limit_exceeded
    ? { rule_applied: null, spending_limit_exceeded: decision.spending_limit_exceeded }
    : { rule_applied: decision.rule_applied };
}

/** Applies lazy expiry: a pending request past its expiry is expired now, and the row as it then is returned. */
export async function withLazyExpiry(deps: ActionsDeps, row: RequestRow): Promise<RequestRow> {
  if (row.status !== 'pending' || row.expires_at.getTime() > Date.now()) return row;
  return (await deps.requests.expireIfDue(row.id)) ?? (await deps.requests.findForAccount(row.id, row.account_id)) ?? row;
}

/** Create, read and list an agent's own action requests. */
export function actionHandlers(deps: ActionsDeps): BoundHandler[] {
  return [
    handle(ep.create, async ({ agent, body }, ctx) => {
      if (body.callback_url) checkCallbackUrl(deps.config, body.callback_url);
      const contentHash = contentHashOf(body);
      const id = newId('action');
      const amountCents = body.amount == null ? null : toCents(body.amount);
      if (amountCents === 0) throw errors.badRequest('amount: must be at least 0.01');
      // Every validated request counts against the plan quota, whatever its outcome; one refused here does not.
      const quota = deps.config.FREE_PLAN_MONTHLY_ACTIONS;
      if ((await deps.accounts.countAction(agent.account_id, quota)) === undefined) throw errors.quotaExceeded(quotaExceededDetail(quota));
      const decision = await deps.policy.decide(
        { action_id: id, account_id: agent.account_id, agent_id: agent.agent_id, action_type: body.action_type, risk_level: body.risk_level, amount_cents: amountCents, currency: body.currency },
        ctx,
      ).catch(async (err: unknown) => {
        await deps.accounts.uncountAction(agent.account_id);
        throw err;
      });
      const resolved = decision.outcome !== 'pending';
      const row = await deps.requests.insert(
        {
          id, account_id: agent.account_id, agent_id: agent.agent_id, action_type: body.action_type, title: body.title,
          description: body.description ?? null, risk_level: body.risk_level, risk_rank: riskRank(body.risk_level),
          reversible: body.reversible, amount_cents: amountCents === null ? null : String(amountCents), currency: body.currency,
          recipient: body.recipient ?? null,
          metadata_enc: body.metadata ? deps.keyring.encrypt(JSON.stringify(body.metadata), `request:${id}:metadata`) : null,
          callback_url: body.callback_url ?? null, content_hash: contentHash,
          status: resolved ? decision.outcome : 'pending',
          rule_applied: resolved ? decision.rule_applied : null,
          resolved_by: resolved ? decision.resolved_by : null,
          reason: null,
          spending_limit_exceeded: resolved ? (decision.spending_limit_exceeded ?? null) : null,
          expires_in_seconds: body.expires_in_seconds,
          resolved,
        },
        [
          { event: 'created', actor: `agent:${agent.agent_id}`, detail: { action_type: body.action_type, risk_level: body.risk_level, amount_cents: amountCents } },
          ...(resolved ? [{ event: decision.outcome, actor: decision.resolved_by, detail: decisionDetail(decision) }] : []),
        ],
      ).catch(async (err: unknown) => {
        // An approval the policy counted must not keep counting for a request that was never stored.
        if (decision.outcome !== 'pending' && decision.spend_recorded) await deps.policy.releaseSpend({ action_id: id, account_id: agent.account_id }, ctx);
        await deps.accounts.uncountAction(agent.account_id);
        throw err;
      });
      ctx.log.info({ action_id: id, status: row.status }, 'action created');
      return toActionView(row, body.metadata ?? {});
    }),

    handle(ep.get, async ({ agent, id }) => {
      const found = await deps.requests.findForAgent(id, agent.agent_id);
      if (!found) throw errors.notFound(`Action request '${id}' not found`);
      const row = await withLazyExpiry(deps, found);
      return toActionView(row, metadataOf(deps, row));
    }),

    handle(ep.list, async ({ agent, query }) => {
      const rows = await deps.requests.listForAgent(agent.agent_id, query);
      const now = Date.now();
      const current = await Promise.all(rows.map((r) => (r.status === 'pending' && r.expires_at.getTime() <= now ? withLazyExpiry(deps, r) : r)));
      const shown = query.status ? current.filter((r) => r.status === query.status) : current;
      return { actions: shown.map((r) => toActionView(r, metadataOf(deps, r))) };
    }),
  ];
}
