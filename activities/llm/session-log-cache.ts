import type { InjectedSinks } from '@temporalio/worker';
import type { LlmSettings } from '../../contracts/llm-call';
import { EMPTY_LOG_DIGEST, extendDigestWithJson } from '../../contracts/log-digest';
import { readLogPages } from '../../contracts/log-pages';
import type { SessionLogSinks } from '../../contracts/session-log-sinks';
import type { SessionEvent } from '../../contracts/session-log';

export interface RunRef {
  workflowId: string;
  runId: string;
}

/** Where the log is read when the cache cannot answer: the session itself, by Query. */
export interface LogSource {
  settings(): Promise<LlmSettings>;
  page(fromSeq: number): Promise<SessionEvent[]>;
}

export interface Conversation {
  settings: LlmSettings;
  events: SessionEvent[];
  /**
   * False when the session's own log no longer matches the digest the call was scheduled
   * with: its code now writes some event differently than when it scheduled the call (a
   * deploy that changed a message text, say). The session's log is used: it is what the
   * session shows and what every later call will send.
   */
  matched: boolean;
}

/** How reads were answered, for tests and the benchmark. */
export interface LogCacheStats {
  /** From memory, no Query. */
  hits: number;
  /** The cache held a prefix; only the events after it were queried. */
  extended: number;
  /** Read whole by Query. */
  fetched: number;
  /** Read whole, and the session's log did not match the digest (see `Conversation.matched`). */
  mismatched: number;
  runs: number;
  bytes: number;
}

interface Entry {
  settings: LlmSettings;
  /** The seq of the run's first event: a run that continued as new starts where its predecessor's compaction cut. */
  base: number;
  events: SessionEvent[];
  /** `digests[n]` is the digest of the first `n` events (the run's, from `base`: what the workflow digests). */
  digests: string[];
  /** JSON characters held, which is what the size bound counts. */
  bytes: number;
}

/**
 * The worker's copy of its sessions' logs, one per workflow run, fed by the workflow's
 * sink (workflows/log-sink.ts) and read by the LLM activity. Every read is checked against
 * the digest the call was scheduled with; what the copy lacks, or gets wrong, is read from
 * the session by Query and kept for the next call. So it is never a source of truth, only
 * the reason a step normally costs no Query: the LLM activity usually runs on the worker
 * whose workflow task scheduled it (eager dispatch starts it there whenever that worker has
 * a free activity slot).
 *
 * Bounded by `maxBytes`, least recently used run first.
 *
 * Positions are seqs, the session's across runs; a run's copy starts at its first event's.
 */
export class SessionLogCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  readonly #counts = { hits: 0, extended: 0, fetched: 0, mismatched: 0 };

  constructor(readonly maxBytes: number) {}

  open(run: RunRef, settings: LlmSettings, events: readonly SessionEvent[]): void {
    const digests = [EMPTY_LOG_DIGEST];
    let bytes = 0;
    for (const event of events) {
      bytes += this.#extend(digests, event);
    }
    this.#store(keyOf(run), { settings, base: events[0]?.seq ?? 0, events: [...events], digests, bytes });
  }

  append(run: RunRef, events: readonly SessionEvent[]): void {
    const key = keyOf(run);
    const entry = this.#entries.get(key);
    if (!entry) return;
    for (const event of events) {
      // A gap (events appended while this worker did not hold the run) makes the copy useless.
      if (event.seq !== entry.base + entry.events.length) {
        this.#drop(key);
        return;
      }
      entry.events.push(event);
      const bytes = this.#extend(entry.digests, event);
      entry.bytes += bytes;
      this.#bytes += bytes;
    }
    this.#evict();
  }

  close(run: RunRef): void {
    this.#drop(keyOf(run));
  }

  /**
   * The settings and the run's events before `uptoSeq`, proven by `digest`.
   * Without a digest (a call scheduled before digests existed) they come from the
   * session, unchecked, and are not kept.
   */
  async read(run: RunRef, uptoSeq: number, digest: string | undefined, source: LogSource): Promise<Conversation> {
    if (digest === undefined) {
      const [settings, events] = await Promise.all([source.settings(), readLogPages((fromSeq) => source.page(fromSeq), uptoSeq)]);
      this.#counts.fetched++;
      return { settings, events, matched: true };
    }
    const key = keyOf(run);
    const held = this.#touch(key);
    if (held && digestUpto(held, uptoSeq) === digest) {
      this.#counts.hits++;
      return { settings: held.settings, events: held.events.slice(0, uptoSeq - held.base), matched: true };
    }
    const [settings, read] = await Promise.all([held ? held.settings : source.settings(), this.#readProven(held, uptoSeq, digest, source)]);
    const matched = digestUpto(read, uptoSeq) === digest;
    // Sink calls may have extended the copy while this read waited; keep the longer one.
    const now = this.#entries.get(key);
    if (!matched || !now || digestUpto(now, uptoSeq) !== digest) this.#store(key, { ...read, settings });
    return { settings, events: read.events, matched };
  }

  stats(): LogCacheStats {
    return { ...this.#counts, runs: this.#entries.size, bytes: this.#bytes };
  }

  /** The events up to `uptoSeq` from the session: after `held` when it is a prefix of them, else all. */
  async #readProven(held: Entry | undefined, uptoSeq: number, digest: string, source: LogSource): Promise<Omit<Entry, 'settings'>> {
    // A shorter copy may be a prefix of the wanted log; a longer one that missed has diverged.
    if (held && held.base + held.events.length < uptoSeq) {
      const copy = { base: held.base, events: held.events.slice(), digests: held.digests.slice(), bytes: held.bytes };
      const extended = await this.#readAfter(copy, uptoSeq, source);
      if (digestUpto(extended, uptoSeq) === digest) {
        this.#counts.extended++;
        return extended;
      }
    }
    const read = await this.#readAfter({ base: undefined, events: [], digests: [EMPTY_LOG_DIGEST], bytes: 0 }, uptoSeq, source);
    this.#counts.fetched++;
    if (digestUpto(read, uptoSeq) !== digest) this.#counts.mismatched++;
    return read;
  }

  /**
   * Extends `copy` (not held by the cache) with the events after it, up to `uptoSeq`. An
   * empty copy without a base is read from the run's first event, whatever its seq.
   */
  async #readAfter(copy: Omit<Entry, 'settings' | 'base'> & { base: number | undefined }, uptoSeq: number, source: LogSource): Promise<Omit<Entry, 'settings'>> {
    const fromSeq = copy.base === undefined ? 0 : copy.base + copy.events.length;
    const more = await readLogPages((seq) => source.page(seq), uptoSeq, fromSeq);
    const base = copy.base ?? more[0]?.seq ?? 0;
    for (const event of more) {
      copy.events.push(event);
      copy.bytes += this.#extend(copy.digests, event);
    }
    return { ...copy, base };
  }

  /** Pushes the digest after `event`; returns the event's size. */
  #extend(digests: string[], event: SessionEvent): number {
    const json = JSON.stringify(event);
    digests.push(extendDigestWithJson(digests[digests.length - 1] as string, json));
    return json.length;
  }

  #touch(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  #store(key: string, entry: Entry): void {
    this.#drop(key);
    if (this.maxBytes === 0) return;
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    this.#evict();
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #evict(): void {
    for (const key of this.#entries.keys()) {
      if (this.#bytes <= this.maxBytes) return;
      this.#drop(key);
    }
  }
}

const keyOf = (run: RunRef) => `${run.workflowId}\u0000${run.runId}`;

/** The digest of the copy's events before `uptoSeq`; undefined when the copy does not reach it. */
function digestUpto(copy: Pick<Entry, 'base' | 'digests'>, uptoSeq: number): string | undefined {
  return uptoSeq < copy.base ? undefined : copy.digests[uptoSeq - copy.base];
}

/** The worker's side of workflows/log-sink.ts. */
export function sessionLogSinks(cache: SessionLogCache): InjectedSinks<SessionLogSinks> {
  return {
    sessionLog: {
      opened: { fn: (info, settings, events) => cache.open(info, settings, events) },
      appended: { fn: (info, events) => cache.append(info, events) },
      closed: { fn: (info) => cache.close(info) },
    },
  };
}
