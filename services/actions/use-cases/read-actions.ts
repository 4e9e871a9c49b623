import type {
  ActionList,
  ActionView,
  AgentPrincipal,
  ListActionsRequest,
  PendingItem,
  PendingList,
} from '@agent-auth/contracts';
import { EncodedJson } from '@agent-auth/bus';
import { errors } from '@agent-auth/errors';
import { decodeListCursor, encodeListCursor } from '../domain/list-cursor.js';
import { currentPendingItem, escalatedPendingItem, toActionView, toPendingItem } from '../domain/views.js';
import type { ActionsDeps } from './deps.js';
import { type Asker, namesOf } from '../domain/routing.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

const PENDING_LIST_MAX = 500;
/** Built pending entries kept in memory, by request id: a device reads the same hundreds again and again. */
const KEPT_ENTRIES_MAX = 5000;

interface KeptEntry {
  item: PendingItem;
  json: Buffer;
}

type Deps = Pick<ActionsDeps, 'requests'> & { expiry: Expiry; metadata: MetadataSeal };

/** Reading requests: an agent's own (one, or a filtered list) and an account's pending list, expiry applied. */
export function createActionReading(deps: Deps) {
  const { requests, expiry, metadata } = deps;
  // Everything of a pending entry but its quorum's approvals (and its escalation) is fixed when the request is
  // created, so an entry built (and encoded) once is good until it leaves the list; frozen, since every reader gets
  // the same object.
  const kept = new Map<string, KeptEntry>();
  const keep = (item: PendingItem): KeptEntry => {
    const entry = { item: Object.freeze(item), json: Buffer.from(JSON.stringify(item)) };
    kept.set(item.id, entry);
    // Maps keep insertion order: the first key is the one built longest ago.
    if (kept.size > KEPT_ENTRIES_MAX) kept.delete(kept.keys().next().value!);
    return entry;
  };
  return {
    async get(agent: AgentPrincipal, id: string): Promise<ActionView> {
      const found = await requests.findForAgent(id, agent.agent_id);
      if (!found) throw errors.actionNotFound(id);
      const row = await expiry.current(found);
      return toActionView(row, metadata.open(row), metadata.openUpdatedInput(row));
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

    /** The account's pending list as routed to the asking member, encoded from the kept entries' JSON (a quorum's entry afresh: approvals move). */
    async pending(accountId: string, asker: Asker): Promise<EncodedJson<PendingList>> {
      const heads = await requests.pendingHeads(accountId, PENDING_LIST_MAX, namesOf(asker));
      // Taken before the read below, so entries another call pushes out meanwhile are still at hand.
      const entries = new Map<string, KeptEntry>();
      const missing: string[] = [];
      for (const { id } of heads) {
        const entry = kept.get(id);
        if (entry) entries.set(id, entry);
        else missing.push(id);
      }
      if (missing.length > 0) {
        for (const row of await requests.pendingRows(missing)) {
          entries.set(row.id, keep(toPendingItem(row, metadata.open(row), null)));
        }
      }
      const encoded: Buffer[] = [];
      for (const head of heads) {
        let entry = entries.get(head.id);
        if (!entry) continue;
        // Escalated since its entry was built: built again, once, and kept so.
        const escalated = escalatedPendingItem(entry.item, head.escalated_at);
        if (escalated) entry = keep(escalated);
        const { item, json } = entry;
        encoded.push(item.quorum ? Buffer.from(JSON.stringify(currentPendingItem(item, head.quorum_approvals))) : json);
      }
      return EncodedJson.listOf<PendingList>('requests', encoded);
    },
  };
}
