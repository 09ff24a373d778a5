import { parseSse, type SseEvent } from '../../activities/llm/sse';
import type { SessionEvent } from '../../contracts/session-log';
import { within } from './barrier';

/** One viewer of `GET /v1/sessions/{id}/events`, keeping every message it got. */
export interface EventStreamViewer {
  messages(): readonly SseEvent[];
  /** The `log` events' SessionEvents, in the order they came. */
  logEvents(): SessionEvent[];
  /** Resolves once a log event matching `match` has come (or came before). */
  waitForLog(match: (event: SessionEvent) => boolean, timeoutMs?: number): Promise<SessionEvent>;
  /** Resolves once any message matching `match` has come; rejects if the stream ends first. */
  waitFor(match: (message: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the gateway ends the stream. */
  readonly ended: Promise<void>;
  /** Leaves, as a browser tab closing does. */
  close(): void;
}

/** Opens the stream (the answer's head arrived: the viewer is following) with `Authorization: Bearer key` when given. */
export async function openEventStream(baseUrl: string, sessionId: string, options: { lastEventId?: string; after?: string; key?: string } = {}): Promise<EventStreamViewer> {
  const url = new URL(`/v1/sessions/${encodeURIComponent(sessionId)}/events`, baseUrl);
  if (options.after !== undefined) url.searchParams.set('after', options.after);
  const left = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(url, { headers, signal: left.signal });
  if (response.status !== 200 || !response.body) throw new Error(`GET ${url.pathname} answered ${response.status}: ${await response.text()}`);
  const body = response.body;
  const messages: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let done = false;
  const ended = (async () => {
    try {
      for await (const message of parseSse(body, { provider: 'gateway', endpoint: `GET ${url.pathname}` })) {
        messages.push(message);
        for (const wake of waiters) wake();
      }
    } catch (error) {
      if (!left.signal.aborted) throw error;
    } finally {
      done = true;
      for (const wake of waiters) wake();
    }
  })();
  ended.catch(() => undefined);
  const waitFor = (match: (message: SseEvent) => boolean, what: string, timeoutMs = 30_000) =>
    within(
      new Promise<SseEvent>((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            waiters.delete(check);
            resolve(found);
          } else if (done) {
            waiters.delete(check);
            reject(new Error(`the event stream ended before ${what}`));
          }
        };
        waiters.add(check);
        check();
      }),
      what,
      timeoutMs,
    );
  const logEvents = () => messages.filter((m) => m.event === 'log').map((m) => JSON.parse(m.data) as SessionEvent);
  return {
    messages: () => messages,
    logEvents,
    async waitForLog(match, timeoutMs) {
      const message = await waitFor((m) => m.event === 'log' && match(JSON.parse(m.data) as SessionEvent), 'a matching log event', timeoutMs);
      return JSON.parse(message.data) as SessionEvent;
    },
    waitFor,
    ended,
    close: () => left.abort(),
  };
}
