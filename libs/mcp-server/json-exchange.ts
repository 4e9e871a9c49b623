// The hot path of /mcp: a POST of one tool call answered with one JSON body. The SDK's Streamable HTTP transport
// serves a stateless POST with a server and a transport of its own, built on web Request, Response and stream
// objects; for a call that needs no stream, that costs more CPU than the create behind the tool. Here one MCP server
// per process serves every such call, through a transport of ours that hands it the parsed message and takes its
// answer back: the SDK's own server still parses the call, validates the tool's input and output and runs the tool.
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { createToolServer } from './server.js';
import type { ToolCaller } from './tools.js';

/** What a call answers: the JSON-RPC response to send, or nothing when the call was cancelled first. */
export type ExchangeAnswer = JSONRPCMessage | undefined;

interface OpenCall {
  /** The id the client gave the call (the server sees one of this process's own: clients' ids collide). */
  clientId: RequestId;
  answer: (message: ExchangeAnswer) => void;
}

/**
 * The caller rides with its call as the call's authentication (the agent the HTTP request authenticated), which the
 * server hands to the tool: it stays with the call for as long as the tool runs, a cancelled one included.
 */
const authOf = (caller: ToolCaller): AuthInfo => ({ token: '', clientId: '', scopes: [], extra: { caller } });

/** The caller of a call served through this transport. */
export function callerOfCall(extra: Pick<RequestHandlerExtra<never, never>, 'authInfo'>): ToolCaller {
  const caller = extra.authInfo?.extra?.caller as ToolCaller | undefined;
  if (!caller) throw new Error('a call without its caller');
  return caller;
}

const isResponse = (message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } =>
  'id' in message && ('result' in message || 'error' in message);

/**
 * The transport between the shared server and the calls: each call gets an id of this process's own, so that two
 * clients' equal ids never meet in the server; its answer goes back under the client's id. Messages the server
 * sends about a call besides its answer (progress, logging) are dropped, as the SDK's JSON answers drop them: a call
 * that wants them is served with a stream instead (json-rpc.ts, needsStream).
 */
export class ExchangeTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly open = new Map<number, OpenCall>();
  private issued = 0;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (!isResponse(message) || typeof message.id !== 'number') return;
    const call = this.open.get(message.id);
    if (!call) return;
    this.open.delete(message.id);
    call.answer({ ...message, id: call.clientId } as JSONRPCMessage);
  }

  async close(): Promise<void> {
    for (const call of this.open.values()) call.answer(undefined);
    this.open.clear();
    this.onclose?.();
  }

  /** Hands one request to the server: its answer, and `cancel` to give it up (then the answer is undefined). */
  call(request: JSONRPCRequest, caller: ToolCaller): OpenExchange {
    const id = ++this.issued;
    let settle!: (message: ExchangeAnswer) => void;
    const answer = new Promise<ExchangeAnswer>((resolve) => {
      settle = resolve;
    });
    this.open.set(id, { clientId: request.id, answer: settle });
    const cancel = () => {
      if (!this.open.delete(id)) return;
      // The server's own cancellation: the handler's signal aborts, and the server sends no answer.
      this.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'The client cancelled the call.' },
      });
      settle(undefined);
    };
    this.onmessage?.({ ...request, id }, { authInfo: authOf(caller) });
    return { answer, cancel };
  }
}

/** A call handed to the shared server. */
export interface OpenExchange {
  answer: Promise<ExchangeAnswer>;
  /** Gives the call up: its tool's signal aborts, and `answer` resolves undefined (unless it came first). */
  cancel(): void;
}

/** One MCP server with the tools for every caller of the process, and the way to hand it a call. */
export async function createSharedToolServer() {
  const transport = new ExchangeTransport();
  const server = createToolServer(callerOfCall);
  await server.connect(transport);
  return {
    /** Hands one tools/call to the server, made as `caller`. */
    call: (request: JSONRPCRequest, caller: ToolCaller) => transport.call(request, caller),
    close: () => server.close(),
  };
}
export type SharedToolServer = Awaited<ReturnType<typeof createSharedToolServer>>;
