import type {
  ActionList,
  ActionView,
  AgentPrincipal,
  ListActionsRequest,
  PendingItem,
  PendingList,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { decodeListCursor, encodeListCursor } from '../domain/list-cursor.js';
import { currentPendingItem, toActionView, toPendingItem } from '../domain/views.js';
import type { ActionsDeps } from './deps.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

const PENDING_LIST_MAX = 500;
/** Built pending entries kept in memory, by request id: a device reads the same hundreds again and again. */
const KEPT_ENTRIES_MAX = 5000;

type Deps = Pick<ActionsDeps, 'requests'> & { expiry: Expiry; metadata: MetadataSeal };

/** Reading requests: an agent's own (one, or a filtered list) and an account's pending list, expiry applied. */
export function createActionReading(deps: Deps) {
  const { requests, expiry, metadata } = deps;
  // Everything of a pending entry but its quorum's approvals is fixed when the request is created, so an entry
  // built once is good until it leaves the list; frozen, since every reader gets the same object.
  const kept = new Map<string, PendingItem>();
  const keep = (item: PendingItem): PendingItem => {
    kept.set(item.id, Object.freeze(item));
    // Maps keep insertion order: the first key is the one built longest ago.
    if (kept.size > KEPT_ENTRIES_MAX) kept.delete(kept.keys().next().value!);
    return item;
  };
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
      const heads = await requests.pendingHeads(accountId, PENDING_LIST_MAX);
      // Taken before the read below, so entries another call pushes out meanwhile are still at hand.
      const items = new Map<string, PendingItem>();
      const missing: string[] = [];
      for (const { id } of heads) {
        const item = kept.get(id);
        if (item) items.set(id, item);
        else missing.push(id);
      }
      if (missing.length > 0) {
        for (const row of await requests.pendingRows(missing)) {
          const item = keep(toPendingItem(row, metadata.open(row), null));
          items.set(item.id, item);
        }
      }
      const entries: PendingItem[] = [];
      for (const head of heads) {
        const item = items.get(head.id);
        if (item) entries.push(currentPendingItem(item, head.quorum_approvals));
      }
      return { requests: entries };
    },
  };
}
