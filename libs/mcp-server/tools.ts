// The tools of the MCP server (docs/api-guide.md, Client library and MCP server). Descriptions are written for the model that calls them: when to use the tool,
// what comes back, and what to do next.
import { FINAL_STATUSES, WaitTimeoutError, type Action, type AgentAuthClient } from '@agent-auth/client';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { guarded, ok } from './results.js';
import {
  ActionOutput,
  ApiCallOutput,
  HistoryOutput,
  RequestApprovalOutput,
  SpendingSummaryOutput,
  VaultServicesOutput,
} from './schemas.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

// MCP clients reset their own time-outs on progress; this server promises one at least every 5 s.
const PROGRESS_EVERY_MS = 4000;

const ACTION_TYPES = ['communication', 'purchase', 'scheduling', 'legal', 'data_access', 'social', 'system'] as const;
const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
const STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;

// MCP clients time a tool call out (often after 60 s), so one wait is bounded and the model is told to call again.
const DEFAULT_WAIT_SECONDS = 50;
const requestId = z
  .string()
  .min(1)
  .describe('The request id returned by request_approval or execute_api_call (starts with act_).');
const waitSeconds = z
  .number()
  .int()
  .min(1)
  .max(600)
  .optional()
  .describe(
    `How long to wait in this call, in seconds (default ${DEFAULT_WAIT_SECONDS}). If the request is still pending afterwards, call the tool again.`,
  );

/** What the model should do with a request in its current status. */
function advice(a: Action): string {
  switch (a.status) {
    case 'approved':
      return `Request ${a.id} is APPROVED (by ${a.resolved_by}). You may proceed with the action.`;
    case 'denied':
      return `Request ${a.id} is DENIED (by ${a.resolved_by}${a.reason ? `, reason: ${a.reason}` : ''}). Do not perform the action.`;
    case 'expired':
      return `Request ${a.id} EXPIRED without an answer. Do not perform the action; request again if still needed.`;
    case 'cancelled':
      return `Request ${a.id} was CANCELLED by the agent. Do not perform the action; request again if still needed.`;
    default:
      return `Request ${a.id} is PENDING: the human has not answered yet (expires ${a.expires_at}). Call wait_for_approval to wait for the answer.`;
  }
}

/** The device app page of a request, from the service's base URL (which ends in /api/v1). */
export function approvalUrl(baseUrl: string, requestId: string): string {
  const root = /\/api\/v1\/?$/.test(baseUrl) ? baseUrl.replace(/\/api\/v1\/?$/, '') : new URL(baseUrl).origin;
  return `${root}/app/#/requests/${encodeURIComponent(requestId)}`;
}

/**
 * Runs a wait, sending MCP progress notifications (elapsed seconds of `totalSeconds`) at its start and every few
 * seconds while it lasts, when the caller asked for progress with a token.
 */
async function withProgress<T>(
  extra: Extra,
  totalSeconds: number,
  message: string,
  work: () => Promise<T>,
): Promise<T> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return work();
  const started = Date.now();
  let last = -1;
  const tell = () => {
    // Progress must grow with every notification.
    const progress = Math.max(last + 1, Math.floor((Date.now() - started) / 1000));
    last = progress;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress, total: totalSeconds, message },
      })
      .catch(() => {});
  };
  tell();
  const timer = setInterval(tell, PROGRESS_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Waits up to the given seconds (with progress); a still-pending request is returned as is rather than raised. */
async function waitBounded(
  client: AgentAuthClient,
  id: string,
  seconds: number | undefined,
  intervalMs: number,
  extra: Extra,
): Promise<Action> {
  const total = seconds ?? DEFAULT_WAIT_SECONDS;
  return withProgress(extra, total, `Waiting for the human to answer request ${id}`, async () => {
    try {
      return await client.waitForResult(id, { timeoutMs: total * 1000, intervalMs, signal: extra.signal });
    } catch (err) {
      if (err instanceof WaitTimeoutError) return err.action;
      throw err;
    }
  });
}

// The tools' input schemas, built once: a server is made per HTTP request of /mcp, and building zod schemas costs
// more than serving the call.
const REQUEST_APPROVAL_INPUT = z.object({
  action_type: z
    .enum(ACTION_TYPES)
    .describe(
      'communication = sending messages; purchase = paying or buying; scheduling = calendar and bookings; legal = binding agreements; data_access = reading sensitive data; social = public posts; system = infrastructure.',
    ),
  title: z
    .string()
    .min(1)
    .max(200)
    .describe('Short summary the human sees first, e.g. "Buy 3 paperbacks from Acme Books". Max 200 characters.'),
  description: z
    .string()
    .max(2000)
    .optional()
    .describe('Details that help the human decide: what, why, and consequences. Max 2000 characters.'),
  risk_level: z
    .enum(RISK_LEVELS)
    .optional()
    .describe('How bad a mistake would be: low, medium (default), high, critical.'),
  reversible: z.boolean().optional().describe('Whether the action can be undone afterwards (default true).'),
  amount: z
    .number()
    .positive()
    .optional()
    .describe('For financial actions: the amount in major units (e.g. 12.50), positive.'),
  currency: z.string().length(3).optional().describe('ISO 4217 currency code of amount, e.g. USD (default), EUR.'),
  recipient: z.string().max(500).optional().describe('Who receives the money, message or content. Max 500 characters.'),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Extra key-value details (at most 20 keys, 8 KB as JSON), e.g. an order number.'),
  expires_in_seconds: z
    .number()
    .int()
    .min(30)
    .max(3600)
    .optional()
    .describe('How long the human has to answer: 30 to 3600 seconds (default 300). After that the request expires.'),
  callback_url: z
    .string()
    .url()
    .optional()
    .describe('Optional HTTPS URL that receives a webhook when the request is resolved.'),
});

const CHECK_APPROVAL_INPUT = z.object({ request_id: requestId });

const CANCEL_APPROVAL_INPUT = z.object({ request_id: requestId });

const WAIT_FOR_APPROVAL_INPUT = z.object({ request_id: requestId, timeout_seconds: waitSeconds });

const GET_APPROVAL_HISTORY_INPUT = z.object({
  limit: z.number().int().min(1).max(200).optional().describe('How many requests to return, 1 to 200 (default 50).'),
  status: z.enum(STATUSES).optional().describe('Only requests in this status.'),
  action_type: z.enum(ACTION_TYPES).optional().describe('Only requests of this action type.'),
});

const GET_SPENDING_SUMMARY_INPUT = z.object({});

const LIST_VAULT_SERVICES_INPUT = z.object({});

const EXECUTE_API_CALL_INPUT = z.object({
  service_name: z
    .string()
    .min(1)
    .max(200)
    .describe('The vault service whose credential to use, as listed by list_vault_services.'),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).describe('HTTP method.'),
  url: z.string().url().describe("Full https URL to call; its host must be in the service's allowed_hosts."),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe('Extra request headers (they can never replace the credential header).'),
  body: z.string().optional().describe('Request body as a string, e.g. JSON text.'),
  title: z
    .string()
    .max(200)
    .optional()
    .describe('What the human sees; defaults to "<METHOD> <url> via <service_name>".'),
  description: z.string().max(2000).optional().describe('Why you want to make this call.'),
  risk_level: z.enum(RISK_LEVELS).optional().describe('low, medium (default), high, critical.'),
  request_id: z
    .string()
    .optional()
    .describe('Resume an earlier execute_api_call whose approval was still pending: its request id.'),
  timeout_seconds: waitSeconds,
});

/** Whom a tool call acts for: the client it calls the service through, and the service's public base URL. */
export interface ToolCaller {
  client: AgentAuthClient;
  /** The service's public base URL, ending in /api/v1 (for the approval links). */
  baseUrl: string;
  /** Poll interval of the waiting tools against a service without held waits; 2000 ms by default. */
  pollIntervalMs?: number;
}

/**
 * The caller of a tool call: always the same one for a server made for one caller (stdio, one HTTP request), the
 * call's own for the server that every caller of a process shares (json-exchange.ts).
 */
export type CallerOf = (extra: Extra) => ToolCaller;

/** Registers the agent-auth tools (the seven of the API plus cancel_approval) on an MCP server. */
export function registerTools(server: McpServer, callerOf: CallerOf): void {
  const intervalOf = (caller: ToolCaller) => caller.pollIntervalMs ?? 2000;

  server.registerTool(
    'request_approval',
    {
      title: 'Request human approval',
      description:
        'Ask the human account holder to approve an action BEFORE you perform it (they approve or deny on their phone with biometrics). ' +
        'Use it for anything that spends money, sends messages on their behalf, signs agreements, touches sensitive data, posts publicly or changes infrastructure. ' +
        'Returns at once with the request id and its initial status: usually pending, but an automatic rule or spending limit may already have approved or denied it. ' +
        'If pending, call wait_for_approval with the id. Never perform the action unless the status is approved. ' +
        'approval_url is the page where the human answers it; you may show it to them.',
      outputSchema: RequestApprovalOutput,
      inputSchema: REQUEST_APPROVAL_INPUT,
    },
    (args, extra) =>
      guarded(async () => {
        const { client, baseUrl } = callerOf(extra);
        const action = await client.requestAction(args, { signal: extra.signal });
        const link = approvalUrl(baseUrl, action.id);
        const summary = action.status === 'pending' ? `${advice(action)} The human answers at ${link}` : advice(action);
        return ok(summary, { ...action, approval_url: link });
      }),
  );

  server.registerTool(
    'check_approval',
    {
      title: 'Check an approval request',
      description:
        'Read the current status of an approval request once, without waiting: pending, approved, denied or expired, with who resolved it and when.',
      inputSchema: CHECK_APPROVAL_INPUT,
      outputSchema: ActionOutput,
    },
    ({ request_id }, extra) =>
      guarded(async () => {
        const action = await callerOf(extra).client.getStatus(request_id, { signal: extra.signal });
        return ok(advice(action), action);
      }),
  );

  server.registerTool(
    'cancel_approval',
    {
      title: 'Withdraw an approval request',
      description:
        'Withdraw one of your pending approval requests when you no longer need the action (the plan changed, the user cancelled): ' +
        'the human stops seeing it and it ends as cancelled. A request already approved, denied or expired cannot be withdrawn.',
      inputSchema: CANCEL_APPROVAL_INPUT,
      outputSchema: ActionOutput,
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    ({ request_id }, extra) =>
      guarded(async () => {
        const action = await callerOf(extra).client.cancelAction(request_id, { signal: extra.signal });
        return ok(advice(action), action);
      }),
  );

  server.registerTool(
    'wait_for_approval',
    {
      title: 'Wait for the human to answer',
      description:
        'Block until an approval request is approved, denied or expired, for at most timeout_seconds: the answer comes the moment the human decides. ' +
        'Progress notifications are sent while it waits. If it is still pending when the time is up, the result says so: call wait_for_approval again. ' +
        'Only proceed with the action when the status is approved.',
      inputSchema: WAIT_FOR_APPROVAL_INPUT,
      outputSchema: ActionOutput,
    },
    ({ request_id, timeout_seconds }, extra) =>
      guarded(async () => {
        const caller = callerOf(extra);
        const action = await waitBounded(caller.client, request_id, timeout_seconds, intervalOf(caller), extra);
        return ok(advice(action), action);
      }),
  );

  server.registerTool(
    'get_approval_history',
    {
      title: 'List past approval requests',
      description:
        'List your earlier approval requests, newest first, with their outcome (status, resolved_by, resolved_at). Use it to avoid asking twice for the same thing or to recall what was decided.',
      inputSchema: GET_APPROVAL_HISTORY_INPUT,
      outputSchema: HistoryOutput,
    },
    (args, extra) =>
      guarded(async () => {
        const actions = await callerOf(extra).client.getHistory(args, { signal: extra.signal });
        return ok(`${actions.length} request(s), newest first.`, actions, { actions });
      }),
  );

  server.registerTool(
    'get_spending_summary',
    {
      title: 'Spending against limits',
      description:
        'Show how much has been spent against each spending limit that applies to you (period, limit, spent, remaining, utilization as a fraction). Check it before requesting a purchase that might exceed a limit: a request over a limit is denied automatically.',
      inputSchema: GET_SPENDING_SUMMARY_INPUT,
      outputSchema: SpendingSummaryOutput,
    },
    (_args, extra) =>
      guarded(async () => {
        const summary = await callerOf(extra).client.getSpendingSummary({ signal: extra.signal });
        return ok(`${summary.summaries.length} spending limit(s) apply.`, summary);
      }),
  );

  server.registerTool(
    'list_vault_services',
    {
      title: 'List vault services',
      description:
        'List the API credentials the human keeps in the vault: service_name, auth type, the hosts each may be sent to, and a description. You never see the secrets; use execute_api_call with a service_name to call an API with one.',
      inputSchema: LIST_VAULT_SERVICES_INPUT,
      outputSchema: VaultServicesOutput,
    },
    (_args, extra) =>
      guarded(async () => {
        const services = await callerOf(extra).client.listVaultServices({ signal: extra.signal });
        return ok(`${services.length} vault service(s).`, services, { services });
      }),
  );

  server.registerTool(
    'execute_api_call',
    {
      title: 'Call an API with a vault credential',
      description:
        'Make an HTTP call with a credential from the vault, after the human approves exactly this call. Creates the approval request, waits up to timeout_seconds, and once approved executes the call; the service injects the credential and returns the upstream status_code, headers and body. ' +
        "The url host must be one of the service's allowed_hosts (see list_vault_services). If the human has not answered in time, the result gives the request_id: call execute_api_call again with only request_id (and the same other fields) to keep waiting and execute. Denied or expired calls are not executed.",
      inputSchema: EXECUTE_API_CALL_INPUT,
      outputSchema: ApiCallOutput,
    },
    (args, extra) =>
      guarded(async () => {
        const { request_id, timeout_seconds, ...call } = args;
        const caller = callerOf(extra);
        const { client } = caller;
        const { signal } = extra;
        const created = request_id
          ? await client.getStatus(request_id, { signal })
          : await client.requestApiCall(call, { signal });
        const action = FINAL_STATUSES.includes(created.status)
          ? created
          : await waitBounded(client, created.id, timeout_seconds, intervalOf(caller), extra);
        if (action.status !== 'approved')
          return ok(`${advice(action)} The API call was not made.`, { request_id: action.id, executed: false, action });
        const response = await client.executeApproved(action.id, { signal: extra.signal });
        return ok(`Approved and executed: upstream answered ${response.status_code}.`, {
          request_id: action.id,
          executed: true,
          response,
        });
      }),
  );
}
