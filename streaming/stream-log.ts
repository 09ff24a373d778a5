/** Where the live stream says what went wrong: one line, never a frame's content or a broker's credentials. */
export type LiveStreamLog = (line: string) => void;

export const consoleLog: LiveStreamLog = (line) => console.warn(line);

/**
 * Says the first time something happens, and counts the rest: a peer sending malformed
 * frames by the thousand must not flood the log, yet the first one is seen.
 */
export class OnceLog {
  #count = 0;

  constructor(
    private readonly log: LiveStreamLog,
    private readonly what: string,
  ) {}

  /** How many times it happened. */
  get count(): number {
    return this.#count;
  }

  report(detail: string): void {
    if (this.#count++ === 0) this.log(`live stream: ${this.what} (${detail}); further ones are dropped without a word`);
  }
}
