/** Signals that stop the worker; the SDK's runtime answers the same ones with `worker.shutdown()`. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ShutdownDeadline {
  /** True once a stop signal arrived: whatever `worker.run()` ends with then is an orderly stop. */
  readonly requested: boolean;
}

/**
 * After the first SIGTERM or SIGINT the SDK stops polling and gives running activities
 * the worker's grace time; this makes sure the process is gone within `graceMs` even when
 * that cannot complete: with the server unreachable, the SDK keeps trying to report
 * completions and shut its pollers down, and would hold the process past any deploy
 * tool's patience. Exits 0: the stop was asked for, and what was not reported is retried
 * by Temporal on another worker.
 */
export function armShutdownDeadline(graceMs: number, log: (line: string) => void): ShutdownDeadline {
  const state = { requested: false };
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.requested) return;
    state.requested = true;
    log(`worker: ${signal}: no new tasks; running activities get up to ${graceMs} ms (AGENT_SHUTDOWN_GRACE_MS)`);
    setTimeout(() => {
      log(`worker: shutdown did not finish within ${graceMs} ms (AGENT_SHUTDOWN_GRACE_MS); exiting, Temporal retries what was not reported`);
      process.exit(0);
    }, graceMs).unref();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return state;
}
