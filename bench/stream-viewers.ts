import { Agent, fetch } from 'undici';

/**
 * More viewers of one session's event stream, beside the browser: plain HTTP clients that
 * read the stream and discard it. What the benchmark asks of them is what they cost the
 * gateway and Temporal, not what they see.
 */
export interface StreamViewers {
  /** Resolves once every viewer has received its first log event. */
  attached: Promise<void>;
  /** Disconnects every viewer and waits until each has let go. */
  stop(): Promise<void>;
}

/** How long a viewer may take to receive its first log event before the run fails. */
const ATTACH_TIMEOUT_MS = 60_000;

export function startStreamViewers(gatewayUrl: string, key: string, sessionId: string, count: number): StreamViewers {
  // One connection per viewer, as separate browsers would have; undici's default pool would queue them.
  const dispatcher = new Agent({ connections: count + 1, pipelining: 0 });
  const abort = new AbortController();
  const url = new URL(`/v1/sessions/${encodeURIComponent(sessionId)}/events`, gatewayUrl);
  const viewers = Array.from({ length: count }, () => view(url, key, dispatcher, abort.signal));
  const attached = Promise.all(viewers.map((v) => v.attached)).then(() => undefined);
  return {
    attached,
    async stop() {
      abort.abort();
      await Promise.allSettled(viewers.map((v) => v.done));
      await dispatcher.close();
    },
  };
}

function view(url: URL, key: string, dispatcher: Agent, signal: AbortSignal): { attached: Promise<void>; done: Promise<void> } {
  let attach!: () => void;
  let fail!: (error: Error) => void;
  const attached = new Promise<void>((resolve, reject) => {
    attach = resolve;
    fail = reject;
  });
  const timer = setTimeout(() => fail(new Error(`a viewer of ${url.pathname} received no log event within ${ATTACH_TIMEOUT_MS} ms`)), ATTACH_TIMEOUT_MS);
  const done = (async () => {
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal, dispatcher });
    if (!response.ok || !response.body) throw new Error(`${url.pathname} answered ${response.status}`);
    const decoder = new TextDecoder();
    let logged = false;
    // The end of what came before, so a marker split between two reads is still found.
    let tail = '';
    for await (const chunk of response.body) {
      if (logged) continue;
      const text = tail + decoder.decode(chunk as Uint8Array, { stream: true });
      if (text.includes('event: log')) {
        logged = true;
        attach();
      }
      tail = text.slice(-16);
    }
  })()
    .catch((error: unknown) => {
      if (!signal.aborted) fail(error instanceof Error ? error : new Error(String(error)));
    })
    .finally(() => clearTimeout(timer));
  return { attached, done };
}
