import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted stand-in for the Anthropic Messages API on loopback, so a real coding-agent CLI (Claude Code) can run
 * with no outside network: every request is recorded, and each `POST /v1/messages` is answered by the script, as a
 * server-sent event stream when the request asks for one (the CLI's main loop does) and as one JSON message otherwise.
 */

export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

/** One assistant reply: some text, tool calls, or both (text first). */
export interface ScriptedReply {
  text?: string;
  toolUses?: ScriptedToolUse[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** What the script is told about the request it answers. */
export interface MessagesCall {
  body: any;
  /** How many earlier `POST /v1/messages` calls carried the same tool list: 0 for an agent loop's first turn. */
  turn: number;
  /** Every tool_result block in the request's messages, oldest first. */
  toolResults: ToolResultBlock[];
}

export interface ToolResultBlock {
  tool_use_id: string;
  content: unknown;
  is_error?: boolean;
}

export type AnthropicScript = (call: MessagesCall) => ScriptedReply;

export interface ScriptedAnthropicModel {
  url: string;
  requests: RecordedRequest[];
  /** The `POST /v1/messages` bodies, in arrival order. */
  messagesCalls(): any[];
  close(): Promise<void>;
}

export async function startScriptedAnthropicModel(script: AnthropicScript): Promise<ScriptedAnthropicModel> {
  const requests: RecordedRequest[] = [];
  const turnsByToolList = new Map<string, number>();
  const server = createServer((req, res) => {
    readJson(req)
      .then((body) => {
        const path = (req.url ?? '/').split('?')[0];
        requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
        if (req.method === 'POST' && path === '/v1/messages') {
          const key = toolListKey(body);
          const turn = turnsByToolList.get(key) ?? 0;
          turnsByToolList.set(key, turn + 1);
          const reply = script({ body, turn, toolResults: toolResultsOf(body) });
          answerMessages(res, body, reply);
        } else if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
          sendJson(res, 200, { input_tokens: 100 });
        } else {
          sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${path}` } });
        }
      })
      .catch((error: Error) =>
        sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: error.message } }),
      );
  });
  await listen(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messagesCalls: () => requests.filter((r) => r.path === '/v1/messages').map((r) => r.body),
    close: () => closeServer(server),
  };
}

/** The text of every tool_result block, flattened, for asserting what the model was told. */
export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((part: any) => part?.text ?? '').join('');
  return '';
}

function toolListKey(body: any): string {
  return JSON.stringify((body?.tools ?? []).map((tool: any) => tool?.name));
}

function toolResultsOf(body: any): ToolResultBlock[] {
  const results: ToolResultBlock[] = [];
  for (const message of body?.messages ?? []) {
    if (!Array.isArray(message?.content)) continue;
    for (const block of message.content) if (block?.type === 'tool_result') results.push(block);
  }
  return results;
}

function contentBlocks(reply: ScriptedReply): any[] {
  const blocks: any[] = [];
  if (reply.text !== undefined) blocks.push({ type: 'text', text: reply.text });
  for (const use of reply.toolUses ?? []) {
    blocks.push({
      type: 'tool_use',
      id: use.id ?? `toolu_${randomUUID().replaceAll('-', '')}`,
      name: use.name,
      input: use.input,
    });
  }
  return blocks;
}

function answerMessages(res: ServerResponse, body: any, reply: ScriptedReply): void {
  const blocks = contentBlocks(reply);
  const stopReason = reply.toolUses?.length ? 'tool_use' : 'end_turn';
  const message = {
    id: `msg_${randomUUID().replaceAll('-', '')}`,
    type: 'message',
    role: 'assistant',
    model: body?.model ?? 'scripted',
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20 },
  };
  if (!body?.stream) {
    sendJson(res, 200, message);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const event = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  event('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: block.text },
      });
    } else {
      event('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      event('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    event('content_block_stop', { type: 'content_block_stop', index });
  });
  event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 20 },
  });
  event('message_stop', { type: 'message_stop' });
  res.end();
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
