/** A background loop that runs one pass at a time: at once when woken, else after `pollMs` of sleep. */
export interface WakeLoop {
  /** Asks for a pass as soon as the current one (if any) ends. */
  wake(): void;
  /** True once stop was called: a long pass checks it to end early. */
  readonly stopped: boolean;
  /** Ends the loop after the pass in progress. */
  stop(): Promise<void>;
}

export interface WakeLoopOptions {
  /** How long to sleep between passes when nobody wakes the loop. */
  pollMs: number;
  pass: () => Promise<void>;
  /** Called with whatever a pass throws; the loop goes on. */
  onError: (err: unknown) => void;
  /** Run the first pass at once (default) or only after the first sleep. */
  startAwake?: boolean;
}

/** Starts a wake/sleep/poll loop: the shape of the outbox relay, the webhook delivery loop and the expiry sweeper. */
export function startWakeLoop(options: WakeLoopOptions): WakeLoop {
  let woken = options.startAwake ?? true;
  let stopped = false;
  let nudge: (() => void) | null = null;

  const wake = () => {
    woken = true;
    nudge?.();
  };

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.pollMs);
      nudge = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      if (!woken) await sleep();
      nudge = null;
      woken = false;
      if (stopped) break;
      await options.pass().catch(options.onError);
    }
  })();

  return {
    wake,
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      nudge?.();
      await loop;
    },
  };
}
