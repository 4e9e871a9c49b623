import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, listen } from './scripted-anthropic-model.js';

/**
 * A scripted stand-in for the gateway's coding-agent hook endpoints (`POST /hooks/claude-code`, `POST /hooks/codex`):
 * it records each hook input a CLI posts and answers with whatever the test's `decide` returns, so the CLIs' side of
 * the contract can be proven before (and independently of) the real endpoint.
 */

export interface RecordedHookCall {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A hook answer: an HTTP status and a JSON body (or none, for an empty 2xx). */
export interface HookAnswer {
  status?: number;
  body?: unknown;
}

export interface ScriptedHookEndpoint {
  url: string;
  calls: RecordedHookCall[];
  close(): Promise<void>;
}

export async function startScriptedHookEndpoint(
  decide: (call: RecordedHookCall) => HookAnswer | Promise<HookAnswer>,
): Promise<ScriptedHookEndpoint> {
  const calls: RecordedHookCall[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* recorded as text: the test sees exactly what was sent */
    }
    const call = { path: url.pathname, query: url.searchParams, headers: req.headers, body };
    calls.push(call);
    const answer = await decide(call);
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await listen(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls, close: () => closeServer(server) };
}
