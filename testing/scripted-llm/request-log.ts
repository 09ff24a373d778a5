import type { IncomingHttpHeaders } from 'node:http';
import type { ScriptedReplyKind } from './script';
import type { Provider } from './wire/dialect';
import type { RequestedOutput } from './wire/structured-output';

/**
 * How a request ended, from the server's side:
 * - `pending`: still being answered (or held);
 * - `completed`: the scripted response was sent in full, including error statuses and
 *   truncated streams, which end cleanly by design;
 * - `reset`: the server destroyed the socket, as a `reset` reply asks;
 * - `aborted-by-client`: the client went away before the response was finished;
 * - `aborted-by-server`: `close()` ended it;
 * - `failed`: a bug in the scripted server itself.
 */
export type RequestOutcome = 'pending' | 'completed' | 'reset' | 'aborted-by-client' | 'aborted-by-server' | 'failed';

/**
 * What was played: a scripted kind, `echo` (empty queue, echo model), `unscripted` (the
 * loud 400), `invalid` (a request the server rejected), `over_window` (the provider's
 * context-overflow error for a request above the model's configured window), `unpaired`
 * (the provider's 400 for a tool call without its result or a result without its call,
 * pairing.ts), `summary` (the default answer to a compaction request), `rate_limited` (the
 * provider's 429 for a request above the model's rate limit, rate-limit.ts).
 */
export type RecordedReplyKind = ScriptedReplyKind | 'echo' | 'unscripted' | 'invalid' | 'unpaired' | 'over_window' | 'summary' | 'rate_limited';

/** `compact`: the request ends with the agent's compaction instruction (compaction.ts). */
export type RequestPurpose = 'step' | 'compact';

export interface RecordedRequest {
  /** 1, 2, 3… in order of arrival. */
  seq: number;
  /** Epoch ms when the request arrived, before its body was read. */
  at: number;
  /** Epoch ms when the outcome was settled. */
  endedAt?: number;
  provider: Provider;
  /** The provider's model string, from the body or (Gemini) the URL; '' when the request had none. */
  model: string;
  method: string;
  /** Path and query as sent. For Gemini the query may hold `key=…`. */
  path: string;
  /** As received, API keys included, so tests can check the key arrived. Never logged. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** The body exactly as it arrived, for tests about its bytes (a prompt cache matches a byte prefix). Absent when it was too large to read. */
  rawBody?: string;
  replyKind: RecordedReplyKind;
  purpose: RequestPurpose;
  /** The request's size as its model's context window counts it: JSON characters / 4 (context-window.ts). */
  tokens: number;
  /** The structured output it asked for, in its provider's mode, with the schema as sent (wire/structured-output.ts); absent for free text. */
  output?: RequestedOutput;
  outcome: RequestOutcome;
}

export interface RequestFilter {
  model?: string;
  provider?: Provider;
  replyKind?: RecordedReplyKind;
  purpose?: RequestPurpose;
}

/** A long `npm run llm` session must not grow without bound; tests stay far below this. */
const MAX_RECORDS = 10_000;

const DEFAULT_WAIT_MS = 10_000;

interface Waiter {
  n: number;
  filter: RequestFilter | undefined;
  resolve: (requests: RecordedRequest[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

function matches(request: RecordedRequest, filter: RequestFilter | undefined): boolean {
  return (
    (filter?.model === undefined || request.model === filter.model) &&
    (filter?.provider === undefined || request.provider === filter.provider) &&
    (filter?.replyKind === undefined || request.replyKind === filter.replyKind) &&
    (filter?.purpose === undefined || request.purpose === filter.purpose)
  );
}

export class RequestLog {
  private readonly records: RecordedRequest[] = [];
  private readonly waiters = new Set<Waiter>();
  private seq = 0;

  /** Records a request and returns the live entry, which `settle` later completes. */
  add(entry: Omit<RecordedRequest, 'seq' | 'outcome'>): RecordedRequest {
    const record: RecordedRequest = { seq: ++this.seq, ...entry, outcome: 'pending' };
    this.records.push(record);
    if (this.records.length > MAX_RECORDS) this.records.shift();
    for (const waiter of this.waiters) this.check(waiter);
    return record;
  }

  settle(record: RecordedRequest, outcome: Exclude<RequestOutcome, 'pending'>): void {
    if (record.outcome !== 'pending') return;
    record.outcome = outcome;
    record.endedAt = Date.now();
  }

  /** Copies, so a caller cannot edit the log; call again to see later outcomes. */
  list(filter?: RequestFilter): RecordedRequest[] {
    return this.records.filter((r) => matches(r, filter)).map((r) => ({ ...r }));
  }

  /** Resolves with every matching request so far once there are at least `n`. */
  waitFor(n: number, filter?: RequestFilter, timeoutMs = DEFAULT_WAIT_MS): Promise<RecordedRequest[]> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        n,
        filter,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          const seen = this.list(filter).length;
          reject(new Error(`scripted LLM: waited ${timeoutMs} ms for ${n} request(s)${describe(filter)}, saw ${seen}`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
      this.check(waiter);
    });
  }

  /** Fails every pending wait, so a test does not sit out its timeout after the server is gone. */
  rejectWaiters(reason: string): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`scripted LLM: ${reason}`));
    }
    this.waiters.clear();
  }

  private check(waiter: Waiter): void {
    const found = this.list(waiter.filter);
    if (found.length < waiter.n) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve(found);
  }
}

function describe(filter: RequestFilter | undefined): string {
  const parts = [
    filter?.model === undefined ? undefined : `model "${filter.model}"`,
    filter?.provider === undefined ? undefined : `provider ${filter.provider}`,
    filter?.replyKind === undefined ? undefined : `reply ${filter.replyKind}`,
    filter?.purpose === undefined ? undefined : `purpose ${filter.purpose}`,
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` for ${parts.join(', ')}`;
}
