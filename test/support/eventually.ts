import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` until it returns something other than `undefined`, and returns that.
 * For states only visible by asking (a Query, a file): it fails with `what` after
 * `timeoutMs` instead of hanging the test. A probe that throws counts as "not yet".
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`waited ${timeoutMs} ms for ${what}${why}`);
    }
    await sleep(everyMs);
  }
}
