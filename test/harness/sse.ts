export interface SseEvent {
  id?: string;
  event: string;
  data: any;
  /** performance.now() when the frame was parsed (for the bench). */
  at: number;
}

export interface SseStream {
  status: number;
  events: SseEvent[];
  /** Comment lines seen (heartbeats). */
  comments: string[];
  /** Resolves with the first event matching, already received or still to come. */
  next(match: (e: SseEvent) => boolean): Promise<SseEvent>;
  /** Resolves (with performance.now()) once the stream has ended, whichever side ended it. */
  ended: Promise<number>;
  close(): void;
}

/** Opens a server-sent event stream with fetch and parses its frames as they arrive. */
export async function openEventStream(url: string, headers: Record<string, string>): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters: Array<{ match: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
  const onEvent = (e: SseEvent) => {
    events.push(e);
    for (const w of [...waiters])
      if (w.match(e)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
  };
  let markEnded: (at: number) => void = () => {};
  const ended = new Promise<number>((resolve) => {
    markEnded = resolve;
  });
  if (!res.ok || !res.body) markEnded(performance.now());
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields: Record<string, string> = {};
            for (const line of frame.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.includes(':'))
                fields[line.slice(0, line.indexOf(':'))] = line.slice(line.indexOf(':') + 1).trimStart();
            }
            if (fields.data !== undefined)
              onEvent({
                id: fields.id,
                event: fields.event ?? 'message',
                data: JSON.parse(fields.data),
                at: performance.now(),
              });
          }
        }
      } catch {
        /* aborted */
      }
      markEnded(performance.now());
    })();
  }
  return {
    status: res.status,
    events,
    comments,
    ended,
    next(match) {
      const found = events.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () => abort.abort(),
  };
}
