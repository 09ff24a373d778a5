import { condition, sleep } from '@temporalio/workflow';

/**
 * The idle timeout of a session from revision 2 on (contracts/session-revision.ts): one
 * timer across its waits. Every timer started is a billable action, and the first revision
 * started one for each wait, which the next message cancelled: one per turn.
 *
 * Here a message that wakes the session leaves the timer running. The next wait must end
 * `idleMs` after it began, later than that timer fires, so it keeps the timer and starts one
 * for the rest only when it fires. Turns that come faster than the idle timeout so cost one
 * timer per idle timeout, not one per turn; the session still ends exactly `idleMs` after
 * its last wait began.
 */
export class IdleClock {
  #timer: { firesAt: number; fired: Promise<void> } | undefined;

  /** Waits until there is work or `idleMs` has passed without; true when work came first. */
  async wait(hasWork: () => boolean, idleMs: number): Promise<boolean> {
    if (hasWork()) return true;
    const deadline = Date.now() + idleMs;
    const work = condition(hasWork).then(() => true);
    for (;;) {
      const timer = this.#timerBy(deadline);
      if (await Promise.race([work, timer.fired.then(() => false)])) return true;
      this.#timer = undefined;
      if (hasWork()) return true;
      if (Date.now() >= deadline) return false;
    }
  }

  /** The running timer when it fires by `deadline`, else a new one for it. */
  #timerBy(deadline: number): { firesAt: number; fired: Promise<void> } {
    if (this.#timer && this.#timer.firesAt <= deadline) return this.#timer;
    const fired = sleep(deadline - Date.now(), { summary: 'idle timeout' });
    // A timer left running through a turn is cancelled with the session; nobody waits on it then.
    fired.catch(() => undefined);
    this.#timer = { firesAt: deadline, fired };
    return this.#timer;
  }
}
