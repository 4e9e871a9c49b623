import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, listen, type RecordedRequest } from './scripted-anthropic-model.js';

/**
 * A scripted stand-in for the OpenAI Responses API on loopback, so a real coding-agent CLI (Codex) can run with no
 * outside network: every request is recorded, and each `POST …/responses` is answered by the script as a server-sent
 * event stream (`response.created`, one `response.output_item.done` per item, `response.completed`).
 */

export interface ScriptedFunctionCall {
  name: string;
  /** The call's arguments; sent to the CLI as a JSON string, as the API does. */
  arguments: Record<string, unknown>;
  /** The tool's namespace, for tools the CLI offers in a namespace (Codex's deferred MCP tools: `mcp__<server>`). */
  namespace?: string;
  callId?: string;
}

/** A call of a freeform ("custom") tool, such as Codex's apply_patch: its input is raw text, not JSON. */
export interface ScriptedCustomToolCall {
  name: string;
  input: string;
  callId?: string;
}

export interface ScriptedResponse {
  text?: string;
  functionCalls?: ScriptedFunctionCall[];
  customToolCalls?: ScriptedCustomToolCall[];
}

export interface ResponsesCall {
  body: any;
  /** How many earlier `/responses` calls this server answered: 0 for a run's first turn. */
  turn: number;
  /** The `function_call_output` items of the request's input, oldest first. */
  functionOutputs: FunctionCallOutput[];
  /** The names of the tools the request offers. */
  toolNames: string[];
}

export interface FunctionCallOutput {
  call_id: string;
  output: unknown;
}

export type OpenAiScript = (call: ResponsesCall) => ScriptedResponse;

export interface ScriptedOpenAiModel {
  /** The base URL a provider config points at (ends in /v1). */
  baseUrl: string;
  requests: RecordedRequest[];
  responsesCalls(): any[];
  close(): Promise<void>;
}

export async function startScriptedOpenAiModel(script: OpenAiScript): Promise<ScriptedOpenAiModel> {
  const requests: RecordedRequest[] = [];
  let turn = 0;
  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => {
        const path = (req.url ?? '/').split('?')[0];
        requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
        if (req.method === 'POST' && path.endsWith('/responses')) {
          const reply = script({
            body,
            turn: turn++,
            functionOutputs: functionOutputsOf(body),
            toolNames: toolNamesOf(body),
          });
          streamResponse(res, body, reply);
        } else if (req.method === 'GET' && path.endsWith('/models')) {
          sendJson(res, 200, { object: 'list', data: [], models: [] });
        } else {
          sendJson(res, 404, { error: { message: `no route ${path}`, type: 'not_found' } });
        }
      })
      .catch((error: Error) =>
        sendJson(res, 400, { error: { message: error.message, type: 'invalid_request_error' } }),
      );
  });
  await listen(server);
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    responsesCalls: () => requests.filter((r) => r.path.endsWith('/responses')).map((r) => r.body),
    close: () => closeServer(server),
  };
}

/** The text of a function_call_output's output, whether a string or content parts. */
export function functionOutputText(output: FunctionCallOutput): string {
  if (typeof output.output === 'string') return output.output;
  if (Array.isArray(output.output)) return output.output.map((part: any) => part?.text ?? '').join('');
  return JSON.stringify(output.output);
}

function functionOutputsOf(body: any): FunctionCallOutput[] {
  const input = Array.isArray(body?.input) ? body.input : [];
  return input.filter((item: any) => item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output');
}

function toolNamesOf(body: any): string[] {
  return (body?.tools ?? []).map((tool: any) => tool?.name ?? tool?.function?.name ?? tool?.type);
}

function outputItems(reply: ScriptedResponse): any[] {
  const items: any[] = [];
  if (reply.text !== undefined) {
    items.push({
      type: 'message',
      id: `msg_${randomUUID().replaceAll('-', '')}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  }
  for (const call of reply.functionCalls ?? []) {
    items.push({
      type: 'function_call',
      id: `fc_${randomUUID().replaceAll('-', '')}`,
      call_id: call.callId ?? `call_${randomUUID().replaceAll('-', '')}`,
      name: call.name,
      ...(call.namespace ? { namespace: call.namespace } : {}),
      arguments: JSON.stringify(call.arguments),
      status: 'completed',
    });
  }
  for (const call of reply.customToolCalls ?? []) {
    items.push({
      type: 'custom_tool_call',
      id: `ctc_${randomUUID().replaceAll('-', '')}`,
      call_id: call.callId ?? `call_${randomUUID().replaceAll('-', '')}`,
      name: call.name,
      input: call.input,
      status: 'completed',
    });
  }
  return items;
}

function streamResponse(res: ServerResponse, body: any, reply: ScriptedResponse): void {
  const id = `resp_${randomUUID().replaceAll('-', '')}`;
  const items = outputItems(reply);
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 120,
  };
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body?.model ?? 'scripted' };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  event('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  items.forEach((item, index) => {
    event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } });
    event('response.output_item.done', { output_index: index, item });
  });
  event('response.completed', { response: { ...base, status: 'completed', output: items, usage } });
  res.end();
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return undefined;
  const text = await decodeBody(raw, req.headers['content-encoding']);
  return JSON.parse(text);
}

/** Codex may compress request bodies (its enable_request_compression feature); the model must read them either way. */
async function decodeBody(raw: Buffer, encoding: string | string[] | undefined): Promise<string> {
  if (encoding === 'zstd') {
    const zlib = (await import('node:zlib')) as any;
    if (typeof zlib.zstdDecompressSync === 'function') return zlib.zstdDecompressSync(raw).toString('utf8');
    throw new Error('zstd request body: this Node has no zstd; disable the client request compression');
  }
  if (encoding === 'gzip') return (await import('node:zlib')).gunzipSync(raw).toString('utf8');
  return raw.toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
