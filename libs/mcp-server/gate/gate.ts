// The gate: a JSON-RPC relay between the MCP client that uses it (the caller) and the MCP server it started (the
// child). Every message passes through as it came (ids, _meta, capabilities, requests the server sends the client),
// except a tools/call that needs approval: the gate holds it until the holder answers, then forwards it or answers
// it with a tool error itself.
import { randomUUID } from 'node:crypto';
import type { AgentAuthClient } from '@agent-auth/client';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  ListToolsResult,
  ProgressToken,
  RequestId,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { approvedArguments, buildActionRequest } from './action-request.js';
import { needsApproval, type AskMode } from './approval-policy.js';
import { askHolder, type HolderAnswer } from './holder.js';
import { ProgressRelay, type ProgressParams } from './progress-relay.js';
import { refusalText } from './refusal.js';

export interface GateOptions {
  /** The MCP client's side: a StdioServerTransport on the gate's own stdio. */
  caller: Transport;
  /** The wrapped MCP server: a StdioClientTransport that starts it. */
  child: Transport;
  client: AgentAuthClient;
  ask: AskMode;
  /** Seconds to wait for the holder before refusing the call. */
  timeoutSeconds: number;
  /** The wrapped server's name until its initialize result names it (the command). */
  fallbackName: string;
  log: (line: string) => void;
}

interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: { progressToken?: ProgressToken };
}

// The gate's own requests to the child (tools/list) get ids no caller uses, and an answer within this time.
const OWN_REQUEST_MS = 30_000;
// Tool lists longer than this many pages are taken as a server that pages forever.
const MAX_TOOL_PAGES = 100;
// How long closing waits for held calls to withdraw their requests.
const WITHDRAW_ON_CLOSE_MS = 5000;

const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;
const isNotification = (m: JSONRPCMessage): m is JSONRPCNotification => 'method' in m && !('id' in m);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } =>
  ('result' in m || 'error' in m) && 'id' in m;

/** The request's expires_in_seconds for a wait of `seconds`: the service takes 30 to 3600. */
const expiresIn = (seconds: number) => Math.min(3600, Math.max(30, seconds));

export class McpGate {
  /** Called once both sides are closed. */
  onclose?: () => void;
  private serverName: string;
  private initializeId: RequestId | undefined;
  private toolList: Promise<Map<string, Tool>> | undefined;
  /** Calls the gate holds (deciding or waiting for the holder), by the caller's request id. */
  private readonly held = new Map<RequestId, AbortController>();
  private readonly handling = new Set<Promise<void>>();
  private readonly own = new Map<RequestId, (m: JSONRPCMessage) => void>();
  private readonly ownIdPrefix = `agent-auth-mcp-gate-${randomUUID()}-`;
  private ownIds = 0;
  private readonly progress = new ProgressRelay();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: GateOptions) {
    this.serverName = options.fallbackName;
  }

  /** Starts the wrapped server, then serves the caller. */
  async start(): Promise<void> {
    const { caller, child, log } = this.options;
    child.onmessage = (m) => this.fromChild(m);
    caller.onmessage = (m) => this.fromCaller(m);
    child.onerror = (err) => log(`MCP server connection: ${err.message}`);
    caller.onerror = (err) => log(`client connection: ${err.message}`);
    child.onclose = () => void this.close('the MCP server exited');
    caller.onclose = () => void this.close('the client closed the connection');
    await child.start();
    await caller.start();
  }

  /** Withdraws the requests of held calls, then closes both sides. */
  close(why: string): Promise<void> {
    this.closing ??= (async () => {
      this.options.log(`stopping: ${why}`);
      for (const held of this.held.values()) held.abort(new Error(why));
      const withdrawn = Promise.allSettled([...this.handling]);
      await Promise.race([withdrawn, new Promise((r) => setTimeout(r, WITHDRAW_ON_CLOSE_MS).unref())]);
      await Promise.allSettled([this.options.child.close(), this.options.caller.close()]);
      this.onclose?.();
    })();
    return this.closing;
  }

  private toChild(m: JSONRPCMessage): void {
    this.options.child.send(m).catch((err) => this.options.log(`could not write to the MCP server: ${String(err)}`));
  }

  private toCaller(m: JSONRPCMessage): void {
    this.options.caller.send(m).catch((err) => this.options.log(`could not write to the client: ${String(err)}`));
  }

  private fromCaller(m: JSONRPCMessage): void {
    if (isRequest(m) && m.method === 'initialize') this.initializeId = m.id;
    if (isRequest(m) && m.method === 'tools/call' && typeof m.params?.name === 'string') {
      this.track(this.gateCall(m));
    } else if (!this.cancelsHeldCall(m)) {
      this.toChild(m);
    }
  }

  /** The child never saw a held call: its cancellation is the gate's to act on. */
  private cancelsHeldCall(m: JSONRPCMessage): boolean {
    if (!isNotification(m) || m.method !== 'notifications/cancelled') return false;
    const id = m.params?.requestId as RequestId | undefined;
    const held = id === undefined ? undefined : this.held.get(id);
    held?.abort(new Error(String(m.params?.reason ?? 'cancelled by the client')));
    return held !== undefined;
  }

  private fromChild(m: JSONRPCMessage): void {
    if (isResponse(m)) {
      const own = this.own.get(m.id);
      if (own) {
        own(m);
        return;
      }
      if (m.id === this.initializeId && 'result' in m) this.learnName(m.result);
      this.progress.done(m.id);
    } else if (isNotification(m)) {
      if (m.method === 'notifications/tools/list_changed') this.toolList = undefined;
      if (m.method === 'notifications/progress' && m.params)
        m = { ...m, params: this.progress.shift(m.params as ProgressParams) };
    }
    this.toCaller(m);
  }

  private learnName(result: Record<string, unknown>): void {
    this.initializeId = undefined;
    const name = (result.serverInfo as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string' && name.trim()) this.serverName = name.trim();
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((err) => this.options.log(`tool call handling failed: ${String(err)}`));
    this.handling.add(tracked);
    void tracked.finally(() => this.handling.delete(tracked));
  }

  /** A request of the gate's own to the child, answered to the gate and never seen by the caller. */
  private ownRequest(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = `${this.ownIdPrefix}${++this.ownIds}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.own.delete(id);
        reject(new Error(`${method}: no answer in ${OWN_REQUEST_MS / 1000} s`));
      }, OWN_REQUEST_MS);
      this.own.set(id, (m) => {
        clearTimeout(timer);
        this.own.delete(id);
        if ('error' in m) reject(new Error(`${method}: ${m.error.message}`));
        else resolve((m as { result: Record<string, unknown> }).result);
      });
      this.toChild({ jsonrpc: '2.0', id, method, params });
    });
  }

  private async listTools(): Promise<Map<string, Tool>> {
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = (await this.ownRequest('tools/list', cursor ? { cursor } : {})) as Partial<ListToolsResult>;
      for (const tool of result.tools ?? []) tools.set(tool.name, tool);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /** The child's tools by name, as it lists them now (read again after it says its list changed). */
  private async toolsOfChild(): Promise<Map<string, Tool>> {
    this.toolList ??= this.listTools();
    const list = this.toolList;
    try {
      return await list;
    } catch (err) {
      if (this.toolList === list) this.toolList = undefined;
      // A tool the gate knows nothing about is held: safe, and the holder still decides.
      this.options.log(`could not list the MCP server's tools: ${String(err)}`);
      return new Map();
    }
  }

  private answerError(id: RequestId, text: string): void {
    this.progress.done(id);
    this.toCaller({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } });
  }

  private async gateCall(m: JSONRPCRequest): Promise<void> {
    const controller = new AbortController();
    this.held.set(m.id, controller);
    try {
      const params = m.params as unknown as CallParams;
      const tool = (await this.toolsOfChild()).get(params.name);
      if (controller.signal.aborted) return;
      if (!needsApproval(tool, this.options.ask)) return this.forward(m);
      if (params.arguments !== undefined && !isRecord(params.arguments)) {
        this.toCaller({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'arguments must be an object' } });
        return;
      }
      const answer = await this.askAbout(m.id, params, tool, controller.signal);
      if (answer && !controller.signal.aborted) this.settle(m, answer);
    } finally {
      this.held.delete(m.id);
    }
  }

  /** Runs an approved call with the approved arguments; answers any other outcome with a tool error. */
  private settle(m: JSONRPCRequest, answer: HolderAnswer): void {
    const params = m.params as unknown as CallParams;
    const { id, status } = answer.action;
    const refused = refusalText({ ...answer, toolName: params.name, timeoutSeconds: this.options.timeoutSeconds });
    const asked = params.arguments ?? {};
    const args = refused ? null : approvedArguments(answer.action, asked);
    this.options.log(`${params.name}: request ${id} ${answer.timedOut ? 'not answered in time' : status}`);
    if (refused) this.answerError(m.id, refused);
    else if (!args)
      this.answerError(
        m.id,
        `The approved request ${id} is about other arguments than this call of ${params.name}, so the tool was not run.`,
      );
    else this.forward(args === asked ? m : { ...m, params: { ...m.params, arguments: args } });
  }

  /** Forwards a call the child may run; a cancellation from now on goes to the child. */
  private forward(m: JSONRPCRequest): void {
    this.held.delete(m.id);
    this.toChild(m);
  }

  /** Asks the holder; undefined when the caller cancelled the call or the service could not be asked. */
  private async askAbout(
    id: RequestId,
    params: CallParams,
    tool: Tool | undefined,
    signal: AbortSignal,
  ): Promise<HolderAnswer | undefined> {
    const { client, log, timeoutSeconds } = this.options;
    const token = params._meta?.progressToken;
    const request = buildActionRequest({
      server: this.serverName,
      toolName: params.name,
      tool,
      arguments: params.arguments ?? {},
      expiresInSeconds: expiresIn(timeoutSeconds),
    });
    try {
      return await askHolder({
        client,
        request,
        timeoutSeconds,
        signal,
        log,
        onCreated: (action) => log(`${params.name}: asked the holder (request ${action.id}, ${action.status})`),
        onProgress:
          token === undefined
            ? undefined
            : (seconds, action) =>
                this.toCaller({
                  jsonrpc: '2.0',
                  method: 'notifications/progress',
                  params: {
                    progressToken: token,
                    progress: this.progress.waited(id, token, seconds),
                    total: timeoutSeconds,
                    message: `Waiting for the holder to approve ${params.name} (request ${action.id})`,
                  },
                }),
      });
    } catch (err) {
      if (signal.aborted) {
        log(`${params.name}: the call was cancelled, its request withdrawn`);
        return undefined;
      }
      this.answerError(id, `Could not ask for approval (${String(err)}), so the tool ${params.name} was not run.`);
      return undefined;
    }
  }
}
