import { isFallbackLlmErrorType } from '../../contracts/errors';

/**
 * How long a failure stays evidence that its model is down: a model that failed once and
 * has not been tried since is not known to be down an hour later. Within this, the next
 * call's first failure goes on from the streak; past it, the streak starts again.
 */
export const PROVIDER_HEALTH_FRESH_MS = 300_000;

interface Streak {
  /** The first failure of the streak. */
  sinceMs: number;
  /** The newest one. */
  lastMs: number;
}

/**
 * Since when each `provider:model` has been failing on this worker with a failure a
 * fallback takes (docs/fallback.md), across every call and session the worker runs; an
 * answer from the model clears it. The ladder reads it (`decideRetry`'s
 * `providerFailingSinceMs`) so that, while a provider is down, each new call with a
 * fallback goes to the next model after its first failure instead of spending its own
 * `fallbackAfterMs` learning what the worker already knows.
 *
 * Worker-local, in memory, on purpose: it only decides how soon a call with a next model
 * moves on (each call still tries its own model first), a worker that restarts learns it
 * again from one call's failures, and sharing it would cost a round trip on every call. Times are the callers' (the server's clock as
 * the activity reads it), so it is pure and tests pass them in.
 */
export class ProviderHealth {
  private readonly streaks = new Map<string, Streak>();

  constructor(private readonly freshMs: number = PROVIDER_HEALTH_FRESH_MS) {}

  /** A failed attempt: only a failure a fallback takes counts; any other says nothing of the model's health. */
  failed(model: string, type: string, atMs: number): void {
    if (!isFallbackLlmErrorType(type)) return;
    this.forgetStale(atMs);
    const streak = this.streaks.get(model);
    // Each attempt estimates the server's clock on its own (activity.ts), so failures may come out of order: the streak spans them all.
    this.streaks.set(model, streak ? { sinceMs: Math.min(streak.sinceMs, atMs), lastMs: Math.max(streak.lastMs, atMs) } : { sinceMs: atMs, lastMs: atMs });
  }

  /** The model answered: it is not down, whatever failed before. */
  answered(model: string): void {
    this.streaks.delete(model);
  }

  /** When the model's current streak of failures began, if it is failing; undefined if it is not known to be. */
  failingSinceMs(model: string, nowMs: number): number | undefined {
    const streak = this.streaks.get(model);
    return streak && !this.isStale(streak, nowMs) ? streak.sinceMs : undefined;
  }

  private isStale(streak: Streak, nowMs: number): boolean {
    return nowMs - streak.lastMs > this.freshMs;
  }

  /** Streaks nobody renewed: dropped, so a worker that has seen many models keeps only those failing now. */
  private forgetStale(nowMs: number): void {
    for (const [model, streak] of this.streaks) if (this.isStale(streak, nowMs)) this.streaks.delete(model);
  }
}
