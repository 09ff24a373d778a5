/**
 * The caller's signal aborted the call: the turn or the workflow was cancelled.
 *
 * It is a type of its own, and not an `LlmError`, because an abort is not a provider
 * failure and must never be retried. undici reports an abort as a socket-ish error, so a
 * classifier that sees it first would turn every Esc into a retryable `network_error`. So everything in this folder checks
 * `signal.aborted` BEFORE classifying, and throws this instead.
 */
const BRAND = Symbol.for('durable-agent-worker.LlmAbortError');

export class LlmAbortError extends Error {
  constructor(
    readonly provider: string,
    reason?: unknown,
  ) {
    super(`${provider} call aborted by the caller`, reason === undefined ? undefined : { cause: reason });
    this.name = 'AbortError';
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for our abort error, from any copy of this module. */
export function isAbortError(e: unknown): e is LlmAbortError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}
