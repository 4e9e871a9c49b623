import type { RequestContext } from '@agent-auth/bus';
import {
  type DevicePrincipal,
  metadataScalarsOf,
  type RuleSuggestions,
  type SimulateRequest,
  type SimulationView,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  type CedarAsker,
  cedarPolicyProblem,
  cedarVerdict,
  createCedarAnswers,
  momentOf,
  preparePolicies,
} from '@agent-auth/policy-language';
import {
  createReplayTally,
  type Draft,
  factsOfStored,
  type HistoryRow,
  type ReplayPolicy,
  readsMetadata,
  replayed,
  replayRuleOf,
} from '../domain/replay.js';
import {
  createKindTallies,
  evidenceOf,
  suggestedRuleOf,
  suggestionLimits,
  summaryOf,
} from '../domain/rule-suggestions.js';
import type { HistoryQuery, RequestHistoryStore } from '../store/request-history.js';
import type { ActionsDeps } from './deps.js';
import type { MetadataSeal } from './metadata.js';

type Deps = Pick<ActionsDeps, 'policy' | 'identities'> & {
  requestHistory: RequestHistoryStore;
  metadata: MetadataSeal;
  now?: () => Date;
};

/** Requests read per page, and at most in all: a replay's time and memory stay bounded whatever the history. */
const PAGE_ROWS = 2000;
export const REPLAY_MAX_ROWS = 200_000;
const DAY_MS = 86_400_000;

/** Cedar asked through answers of a replay's own, so a replay's thousands of requests keep no live answer out. */
function replayAsker(): CedarAsker {
  const answers = createCedarAnswers(50_000);
  return (prepared, facts, id, moment) => cedarVerdict(prepared, facts, id, moment, answers);
}

/**
 * An account's requests of a window, agent by agent, each agent's newest first, a page at a time; the next page is
 * read while this one is worked on. At most REPLAY_MAX_ROWS in all.
 */
async function* historyOf(
  store: RequestHistoryStore,
  query: Omit<HistoryQuery, 'after' | 'limit' | 'agent_id'>,
): AsyncGenerator<HistoryRow[]> {
  const agents = await store.agentsOf(query.account_id);
  let left = REPLAY_MAX_ROWS;
  const pageOf = (agent: number, after: HistoryRow | null) => {
    const rows = store.page({ ...query, agent_id: agents[agent]!, after, limit: Math.min(PAGE_ROWS, left) });
    // Awaited below; a page read ahead of a replay that failed meanwhile is not an unhandled rejection.
    rows.catch(() => undefined);
    return { agent, rows };
  };
  // The page read while the one before it is worked on: the same agent's next, else the next agent's first.
  let next: { agent: number; rows: Promise<HistoryRow[]> } | undefined = agents.length ? pageOf(0, null) : undefined;
  while (next) {
    const { agent } = next;
    const rows = await next.rows;
    left -= rows.length;
    next =
      left <= 0
        ? undefined
        : rows.length === PAGE_ROWS
          ? pageOf(agent, rows.at(-1)!)
          : agent + 1 < agents.length
            ? pageOf(agent + 1, null)
            : undefined;
    yield rows;
  }
}

/**
 * Replays of an account's history, here where its metadata can be opened (it never leaves this service): a draft
 * rule or Cedar policy added to today's (POST /rules/simulate), and the rules the history implies
 * (GET /rules/suggestions). Decided by the policy language library, as the policy service decides a create.
 */
export function createRuleReplay(deps: Deps) {
  const now = deps.now ?? (() => new Date());
  /** The scalar values of a stored request's metadata, when the page read its sealed form. */
  const scalarsOf = (row: HistoryRow, read: boolean) =>
    read && row.metadata_enc ? metadataScalarsOf(deps.metadata.openOnce(row)) : undefined;

  /** Today's rules and policies of the account, and its time zone. */
  const todayOf = async (accountId: string, ctx: RequestContext) => {
    const current = await deps.policy.decisionPolicy(accountId, ctx);
    const policies = current.policies.map((p) => ({ id: p.id, name: p.name, cedar: p.cedar }));
    const policy: ReplayPolicy = { rules: current.rules, cedar: preparePolicies(policies) };
    return { policy, policies, timezone: current.timezone };
  };

  /** One pass over the window: today's outcome of each request, and each draft's. */
  const replay = async (
    accountId: string,
    today: { policy: ReplayPolicy; timezone: string },
    drafts: readonly Draft[],
    days: number,
  ): Promise<SimulationView[]> => {
    const tallies = drafts.map(() => createReplayTally(days));
    const metadata = readsMetadata(today.policy, drafts);
    const askCedar = replayAsker();
    const since = new Date(now().getTime() - days * DAY_MS);
    for await (const rows of historyOf(deps.requestHistory, { account_id: accountId, since, metadata })) {
      for (const row of rows) {
        const input = {
          facts: factsOfStored(row, () => scalarsOf(row, metadata)),
          id: row.id,
          moment: momentOf(row.created_at, today.timezone),
          askCedar,
        };
        const { was, would } = replayed(today.policy, drafts, input);
        for (const [i, tally] of tallies.entries()) tally.add(row, was, would[i]!);
      }
    }
    return tallies.map((t) => t.result());
  };

  return {
    /** What a draft rule or Cedar policy, added to today's, would have decided for the account's requests. */
    async simulate(req: SimulateRequest, ctx: RequestContext): Promise<SimulationView> {
      const accountId = req.device.account_id;
      if (req.cedar !== null) {
        const problem = cedarPolicyProblem(req.cedar);
        if (problem) throw errors.invalidPolicy(problem);
      }
      const today = await todayOf(accountId, ctx);
      const draft: Draft = req.rule
        ? { rule: replayRuleOf(req.rule) }
        : { cedar: preparePolicies([...today.policies, { id: 'pol_draft', name: 'draft', cedar: req.cedar! }])! };
      const started = performance.now();
      const [view] = await replay(accountId, today, [draft], req.days);
      ctx.log.info(
        { account_id: accountId, evaluated: view!.evaluated, ms: Math.round(performance.now() - started) },
        'rule replayed',
      );
      return view!;
    },

    /** Drafts of the rules the last 30 days imply, each with its evidence and its replay over them. */
    async suggestions(device: DevicePrincipal, ctx: RequestContext): Promise<RuleSuggestions> {
      const accountId = device.account_id;
      const days = suggestionLimits.days;
      const today = await todayOf(accountId, ctx);
      const kinds = createKindTallies();
      const since = new Date(now().getTime() - days * DAY_MS);
      const decided = { account_id: accountId, since, metadata: true, decidedByPerson: true };
      for await (const rows of historyOf(deps.requestHistory, decided))
        for (const row of rows)
          kinds.add(
            row,
            factsOfStored(row, () => scalarsOf(row, true)),
          );
      // Only kinds today's rules and policies still leave to a person.
      const askCedar = replayAsker();
      const open = kinds.unanimous().filter((t) => {
        const { row, facts } = t.latest;
        const moment = momentOf(row.created_at, today.timezone);
        return replayed(today.policy, [], { facts, id: row.id, moment, askCedar }).was === 'pending';
      });
      const chosen = open.slice(0, suggestionLimits.max);
      if (chosen.length === 0) return { suggestions: [] };
      const names = new Map((await deps.identities.listAgents(accountId)).map((a) => [a.id, a.name]));
      const rules = chosen.map((t) => suggestedRuleOf(t, names.get(t.kind.agent_id) ?? null));
      const replays = await replay(
        accountId,
        today,
        rules.map((rule) => ({ rule })),
        days,
      );
      return {
        suggestions: chosen.map((t, i) => {
          const name = names.get(t.kind.agent_id) ?? null;
          return {
            rule: rules[i]!,
            summary: summaryOf(t, name, days),
            evidence: evidenceOf(t, name, days),
            replay: replays[i]!,
          };
        }),
      };
    },
  };
}
