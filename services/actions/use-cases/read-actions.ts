import type { ActionList, ActionView, AgentPrincipal, ListActionsRequest, PendingList } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { decodeListCursor, encodeListCursor } from '../domain/list-cursor.js';
import { toActionView, toPendingItem } from '../domain/views.js';
import type { ActionsDeps } from './deps.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

const PENDING_LIST_MAX = 500;

type Deps = Pick<ActionsDeps, 'requests'> & { expiry: Expiry; metadata: MetadataSeal };

/** Reading requests: an agent's own (one, or a filtered list) and an account's pending list, expiry applied. */
export function createActionReading(deps: Deps) {
  const { requests, expiry, metadata } = deps;
  return {
    async get(agent: AgentPrincipal, id: string): Promise<ActionView> {
      const found = await requests.findForAgent(id, agent.agent_id);
      if (!found) throw errors.actionNotFound(id);
      const row = await expiry.current(found);
      return toActionView(row, metadata.open(row));
    },

    async list(query: ListActionsRequest): Promise<ActionList> {
      const after = query.cursor ? decodeListCursor(query.cursor) : undefined;
      const { limit, status, action_type } = query;
      const rows = await requests.listForAgent(query.agent.agent_id, { limit, status, action_type, after });
      const current = await Promise.all(rows.map((r) => expiry.current(r)));
      const shown = query.status ? current.filter((r) => r.status === query.status) : current;
      // A full page may have more after it; the cursor is the last stored row read, even if lazy expiry hid it.
      const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
      return {
        actions: shown.map((r) => toActionView(r, metadata.open(r))),
        next_cursor: last ? encodeListCursor({ created_at: last.position, id: last.id }) : null,
      };
    },

    async pending(accountId: string): Promise<PendingList> {
      const rows = await requests.pendingForAccount(accountId, PENDING_LIST_MAX);
      return { requests: rows.map((r) => toPendingItem(r, metadata.open(r))) };
    },
  };
}
