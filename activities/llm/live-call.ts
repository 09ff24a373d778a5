import { LIVE_STREAM_VERSION, type LiveStreamPublisher } from '../../contracts/live-stream';
import { limitWaitLine, llmStartedLine, retryingLine } from '../../contracts/live-progress-lines';
import type { LimitWait } from '../../contracts/fleet-limits';
import type { LlmCallInput } from '../../contracts/llm-call';
import type { StreamProgress } from './providers';

/**
 * One attempt of a step's LLM call on the live stream: its text and thinking as delta
 * frames, each increment the moment the provider's chunk is read (the page shows tokens
 * within a few ms of the provider sending them), and its start and retries as progress
 * frames. Nothing here touches Temporal: no heartbeat, no history, no action.
 *
 * Offsets count the attempt's text from its start in UTF-16 code units (JavaScript string
 * length); a retry streams again from offset 0 under its new attempt number. A compaction's
 * call is not the session's answer: it publishes nothing.
 */
export class LiveCall {
  #text = 0;
  #thinking = 0;

  private constructor(
    private readonly live: LiveStreamPublisher,
    private readonly input: LlmCallInput,
    private readonly attempt: number,
  ) {}

  static of(live: LiveStreamPublisher | undefined, input: LlmCallInput, attempt: number): LiveCall | undefined {
    return live && input.purpose !== 'compact' ? new LiveCall(live, input, attempt) : undefined;
  }

  get #maxAttempts(): number {
    return (this.input.retryPolicy?.maxRetries ?? 0) + 1;
  }

  /** The request goes out. */
  started(): void {
    const { input, attempt } = this;
    this.#progress({ state: 'llm_started', attempt, maxAttempts: this.#maxAttempts, line: llmStartedLine({ model: input.model, attempt, maxAttempts: this.#maxAttempts }) });
  }

  /** The stream grew: what it added since the last call, per channel. */
  progressed(p: StreamProgress): void {
    if (p.thinking.length > this.#thinking) {
      this.#delta('thinking', this.#thinking, p.thinking.slice(this.#thinking));
      this.#thinking = p.thinking.length;
    }
    if (p.text.length > this.#text) {
      this.#delta('text', this.#text, p.text.slice(this.#text));
      this.#text = p.text.length;
    }
  }

  /** The ladder decided another attempt after `retryInMs`. */
  retrying(retryInMs: number, failureType: string): void {
    const next = { retryInMs, attempt: this.attempt + 1, maxAttempts: this.#maxAttempts, failureType };
    this.#progress({ state: 'llm_retrying', ...next, line: retryingLine(next) });
  }

  /** The call waits for a lease of the fleet limits (docs/fleet-limits.md). */
  waiting(wait: LimitWait): void {
    const { attempt } = this;
    this.#progress({ state: 'llm_waiting', attempt, maxAttempts: this.#maxAttempts, line: limitWaitLine(wait, Date.now()) });
  }

  #delta(channel: 'text' | 'thinking', offset: number, text: string): void {
    const { sessionId, turn, step } = this.input;
    this.live.publish({ kind: 'delta', v: LIVE_STREAM_VERSION, sessionId, turn, step, attempt: this.attempt, channel, offset, text });
  }

  #progress(p: { state: 'llm_started' | 'llm_retrying' | 'llm_waiting'; line: string; attempt: number; maxAttempts: number; retryInMs?: number; failureType?: string }): void {
    const { sessionId, turn, step } = this.input;
    this.live.publish({ kind: 'progress', v: LIVE_STREAM_VERSION, sessionId, turn, step, ...p });
  }
}
