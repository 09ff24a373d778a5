/**
 * What waits between a session's follower, which delivers at once, and one viewer's
 * connection, which writes as fast as the viewer reads. It is bounded: a viewer that
 * falls `maxItems` behind is let go with the reason (it reconnects from its Last-Event-ID
 * and reads what it missed from the log) rather than holding the gateway's memory.
 */
export class ViewerQueue<T> {
  readonly #maxItems: number;
  readonly #items: T[] = [];
  #waiting: ((item: T | undefined) => void) | undefined;
  #closedWith: string | undefined;

  constructor(maxItems: number) {
    this.#maxItems = maxItems;
  }

  /** Why it closed; undefined while open. */
  get closedWith(): string | undefined {
    return this.#closedWith;
  }

  push(item: T): void {
    if (this.#closedWith !== undefined) return;
    if (this.#waiting) {
      const take = this.#waiting;
      this.#waiting = undefined;
      take(item);
      return;
    }
    if (this.#items.length >= this.#maxItems) {
      this.close(`the viewer fell ${this.#maxItems} items behind; reconnect with Last-Event-ID to read what it missed`);
      return;
    }
    this.#items.push(item);
  }

  /** The next item; undefined once closed (what was queued before is dropped). */
  next(): Promise<T | undefined> {
    if (this.#closedWith !== undefined) return Promise.resolve(undefined);
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  close(reason: string): void {
    if (this.#closedWith !== undefined) return;
    this.#closedWith = reason;
    this.#items.length = 0;
    const take = this.#waiting;
    this.#waiting = undefined;
    take?.(undefined);
  }
}
