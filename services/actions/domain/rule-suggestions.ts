import {
  type ActionType,
  conditionLimits,
  type RiskLevel,
  riskRank,
  type RuleSuggestion,
  type SuggestedRule,
} from '@agent-auth/contracts';
import { toolNameOf } from '@agent-auth/policy-language';
import type { HistoryRow, ReplayRule } from './replay.js';
import type { RequestFacts } from '@agent-auth/policy-language';

export const suggestionLimits = {
  /** A kind of request a person decided at least this often, always the same way, gives a suggestion. */
  minDecided: 5,
  max: 10,
  /** Kinds tallied at most (a history of ever-new recipients cannot grow this without bound). */
  kinds: 10_000,
  days: 30,
} as const;

/** One kind of request: an agent's requests of one action type, and one tool, or one recipient, or neither. */
interface Kind {
  agent_id: string;
  action_type: string;
  tool_name: string | null;
  recipient: string | null;
}

/** How a person decided the requests of one kind. */
interface KindTally {
  kind: Kind;
  approved: number;
  denied: number;
  last_at: Date;
  /** The newest request of the kind: a suggestion is offered only while today's rules leave it to a person. */
  latest: { row: HistoryRow; facts: RequestFacts };
  /** The highest risk level and amount approved (an approving draft goes no further); null amount: one had none. */
  risk_max: RiskLevel;
  amount_max_cents: number | null;
}

function kindOf(facts: RequestFacts): Kind | null {
  const tool = toolNameOf(facts);
  const recipient = tool === null ? (facts.recipient ?? null) : null;
  // A condition's value is at most 200 characters: a longer tool or recipient cannot be said.
  if ((tool?.length ?? 0) > conditionLimits.text || (recipient?.length ?? 0) > conditionLimits.text) return null;
  return { agent_id: facts.agent_id, action_type: facts.action_type, tool_name: tool, recipient };
}

/** Tallies the requests a person decided, by kind (each agent's newest first, as the history is read). */
export function createKindTallies() {
  const tallies = new Map<string, KindTally>();
  return {
    add(row: HistoryRow, facts: RequestFacts): void {
      const kind = kindOf(facts);
      if (!kind) return;
      const key = JSON.stringify([kind.agent_id, kind.action_type, kind.tool_name, kind.recipient]);
      let t = tallies.get(key);
      if (!t) {
        if (tallies.size >= suggestionLimits.kinds) return;
        t = {
          kind,
          approved: 0,
          denied: 0,
          last_at: row.created_at,
          latest: { row, facts },
          risk_max: 'low',
          amount_max_cents: 0,
        };
        tallies.set(key, t);
      }
      if (row.status === 'approved') {
        t.approved++;
        if (riskRank(facts.risk_level) > riskRank(t.risk_max)) t.risk_max = facts.risk_level;
        t.amount_max_cents =
          facts.amount_cents === null || t.amount_max_cents === null
            ? null
            : Math.max(t.amount_max_cents, facts.amount_cents);
      } else t.denied++;
    },
    /** The kinds decided often enough and always the same way, the best supported first. */
    unanimous(): KindTally[] {
      return [...tallies.values()]
        .filter((t) => t.approved + t.denied >= suggestionLimits.minDecided && (t.approved === 0 || t.denied === 0))
        .sort((a, b) => b.approved + b.denied - (a.approved + a.denied) || b.last_at.getTime() - a.last_at.getTime());
    },
  };
}
export type { KindTally };

const what = (kind: Kind) => (kind.tool_name ? `${kind.tool_name} calls` : `${kind.action_type} requests`);
const to = (kind: Kind) => (kind.recipient ? ` to ${kind.recipient}` : '');

/** The draft rule a unanimous kind implies: exactly that kind, and for approvals no riskier or larger than approved. */
export function suggestedRuleOf(t: KindTally, agentName: string | null): SuggestedRule & ReplayRule {
  const approve = t.approved > 0;
  const { kind } = t;
  const conditions = kind.tool_name
    ? [{ field: 'tool_name', op: 'eq' as const, value: kind.tool_name }]
    : kind.recipient
      ? [{ field: 'recipient', op: 'eq' as const, value: kind.recipient }]
      : null;
  const name = `${approve ? 'Approve' : 'Deny'} ${what(kind)} of ${agentName ?? kind.agent_id}${to(kind)}`;
  return {
    name: name.length > 200 ? `${name.slice(0, 199)}…` : name,
    decision: approve ? 'auto_approve' : 'auto_deny',
    action_type: kind.action_type as ActionType,
    agent_id: kind.agent_id,
    risk_level_max: approve ? t.risk_max : null,
    amount_max_cents: approve ? t.amount_max_cents : null,
    conditions,
  };
}

/** "37 of 37 Read calls of Claude Code approved by a person in 30 days". */
export function summaryOf(t: KindTally, agentName: string | null, days: number): string {
  const decided = t.approved + t.denied;
  const how = t.approved > 0 ? 'approved' : 'denied';
  return `${decided} of ${decided} ${what(t.kind)} of ${agentName ?? t.kind.agent_id}${to(t.kind)} ${how} by a person in ${days} days`;
}

export function evidenceOf(t: KindTally, agentName: string | null, days: number): RuleSuggestion['evidence'] {
  return {
    agent_id: t.kind.agent_id,
    agent_name: agentName,
    action_type: t.kind.action_type as ActionType,
    tool_name: t.kind.tool_name,
    recipient: t.kind.recipient,
    decided: t.approved + t.denied,
    approved: t.approved,
    denied: t.denied,
    days,
    last_at: t.last_at.toISOString(),
  };
}
