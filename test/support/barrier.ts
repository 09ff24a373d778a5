/**
 * A one-shot barrier: `wait()` resolves with the value given to `open()`. Tests use it
 * instead of sleeps, so "A has started before B finishes" is an order, not a timing.
 */
export interface Barrier<T = void> {
  wait(): Promise<T>;
  open(value: T): void;
}

export function barrier<T = void>(): Barrier<T> {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { wait: () => opened, open };
}

/**
 * Waits for `wait`, but at most `timeoutMs`: a barrier that never opens (the code under
 * test never got there) fails the test naming what it waited for, instead of hanging it.
 */
export async function within<T>(wait: Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${timeoutMs} ms for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([wait, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}
