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
