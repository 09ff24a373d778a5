import type { AnyToolDefinition } from '../../contracts/tools/tool-definition';

/**
 * The tools of the latest offer a session's log recorded (MCP, custom or agents), by name:
 * built once per recorded offer, since every step asks for them and a log holds thousands of
 * events. Its tools are looked up as the log says they were offered, never listed again.
 */
export class RecordedOffer<O extends { name: string }, R extends { definition: AnyToolDefinition }> {
  readonly #latest: () => readonly O[] | undefined;
  readonly #record: (offer: O) => R;
  #built: { offer: readonly O[] | undefined; byName: Map<string, R> } = { offer: undefined, byName: new Map() };

  constructor(latest: () => readonly O[] | undefined, record: (offer: O) => R) {
    this.#latest = latest;
    this.#record = record;
  }

  byName(): Map<string, R> {
    const offer = this.#latest();
    if (offer !== this.#built.offer) this.#built = { offer, byName: new Map((offer ?? []).map((entry) => [entry.name, this.#record(entry)])) };
    return this.#built.byName;
  }

  definitions(): AnyToolDefinition[] {
    return [...this.byName().values()].map((entry) => entry.definition);
  }

  owns(name: string): boolean {
    return this.byName().has(name);
  }
}
