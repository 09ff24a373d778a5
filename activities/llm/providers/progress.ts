import type { StreamProgress } from './types';

/**
 * The answer as it grows, and the one place that tells the caller about it. Adapters
 * append to it instead of keeping their own copy of the text, so the progress the
 * activity heartbeats with and the text it returns can not drift apart.
 */
export class ProgressTracker {
  bytes = 0;
  text = '';
  /** Thinking the provider streamed in the clear: shown apart, never part of `text`. */
  thinking = '';
  toolCalls = 0;

  constructor(private readonly sink: ((p: StreamProgress) => void) | undefined) {}

  /** Every chunk, pings included: to a heartbeat, a ping is proof of life. */
  addBytes(n: number): void {
    this.bytes += n;
    this.report();
  }

  appendText(delta: string): void {
    if (delta === '') return;
    this.text += delta;
    this.report();
  }

  appendThinking(delta: string): void {
    if (delta === '') return;
    this.thinking += delta;
    this.report();
  }

  toolCallStarted(): void {
    this.toolCalls += 1;
    this.report();
  }

  private report(): void {
    this.sink?.({ bytes: this.bytes, text: this.text, thinking: this.thinking, toolCalls: this.toolCalls });
  }
}
