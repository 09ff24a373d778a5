/**
 * Requests whose reply says `hold: true` wait here until the test releases their model.
 * Releasing only frees requests already waiting; a test first waits for the request to
 * arrive (`waitForRequests`), then releases it at the moment it wants.
 */
export class Holds {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves on release, on timeout (the reply then plays anyway), or rejects when `signal` aborts. */
  wait(model: string, timeoutMs: number, signal: AbortSignal): Promise<'released' | 'timed-out'> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const set = this.waiting.get(model) ?? new Set();
      this.waiting.set(model, set);
      const done = (outcome: 'released' | 'timed-out' | 'aborted') => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        set.delete(release);
        if (set.size === 0 && this.waiting.get(model) === set) this.waiting.delete(model);
        if (outcome === 'aborted') reject(signal.reason);
        else resolve(outcome);
      };
      const release = () => done('released');
      const onAbort = () => done('aborted');
      const timer = setTimeout(() => done('timed-out'), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      set.add(release);
    });
  }

  /** Lets every request of `model` that is held right now go on; returns how many there were. */
  release(model: string): number {
    const set = this.waiting.get(model);
    if (!set) return 0;
    const releases = [...set];
    for (const release of releases) release();
    return releases.length;
  }

  held(model: string): number {
    return this.waiting.get(model)?.size ?? 0;
  }
}
