/** Work started off a request's path (its answer does not wait for it) that shutdown must still wait for. */
export interface InFlightWork {
  /** Keeps `work` until it settles; its failure is the caller's to handle (it is swallowed here). */
  track(work: Promise<unknown>): void;
  /** Resolves once everything tracked so far, and anything tracked meanwhile, has settled. */
  settled(): Promise<void>;
}

/** Tracks background promises so that a stopping service can wait for them (InFlightWork). */
export function inFlightWork(): InFlightWork {
  const pending = new Set<Promise<unknown>>();
  return {
    track(work) {
      const p: Promise<unknown> = work.catch(() => {}).finally(() => pending.delete(p));
      pending.add(p);
    },
    async settled() {
      while (pending.size) await Promise.all(pending);
    },
  };
}
