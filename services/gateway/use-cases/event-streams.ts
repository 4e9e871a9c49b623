import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { countEventStream } from '@agent-auth/metrics';

/** An open server-sent event stream: write frames to it; `onClose` runs once when it ends, whoever ends it. */
export interface EventStreamConnection {
  send(frame: string): void;
  onClose(cleanup: () => void): void;
  /** Ends the stream from the server's side (its client reconnects, and is authenticated again). */
  close(): void;
}

/** One server-sent event frame. */
export function sseEvent(input: { id: string; event: string; data: unknown }): string {
  return `id: ${input.id}\nevent: ${input.event}\ndata: ${JSON.stringify(input.data)}\n\n`;
}

/**
 * The server-sent event streams of one gateway (GET /device/events, GET /agent/events): the response is taken
 * over from fastify, heartbeat comments keep proxies from closing it, and every open stream is ended before the
 * server closes. HEAD is answered with the stream's headers and no body, and ended at once: it subscribes to
 * nothing, and the connection is kept or closed as for any other answer (`Connection: close` is honoured).
 */
export function eventStreams(app: FastifyInstance, heartbeatMs: number) {
  const open = new Set<() => void>();
  // Streams never end by themselves: close them first, or the server would wait for them on shutdown.
  app.addHook('preClose', async () => {
    for (const close of open) close();
  });

  return {
    /** Starts the stream of an authenticated request; undefined for HEAD (already answered). */
    start(request: FastifyRequest, reply: FastifyReply): EventStreamConnection | undefined {
      // Hijacked: the headers set so far (the rate-limit ones) must be written by hand.
      const admitted = reply.getHeaders() as Record<string, string>;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...admitted,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      if (request.method === 'HEAD') {
        res.end();
        return undefined;
      }
      res.write('retry: 3000\n: connected\n\n');
      const cleanups: Array<() => void> = [countEventStream()];
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
      let ended = false;
      const close = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        for (const cleanup of cleanups) cleanup();
        open.delete(close);
        res.end();
      };
      open.add(close);
      res.on('close', close);
      return {
        send: (frame) => {
          if (!ended) res.write(frame);
        },
        onClose: (cleanup) => {
          if (ended) cleanup();
          else cleanups.push(cleanup);
        },
        close,
      };
    },
  };
}
export type EventStreams = ReturnType<typeof eventStreams>;
