import { chromium, type Browser, type Page } from 'playwright-core';
import type { TextReceipt } from './stream-latency';

/** Debian's package puts it here; CHROMIUM_PATH points elsewhere, as for the UI test. Never a browser download. */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** How long the page may wait for the session's first log event after it opened the stream. */
const FIRST_EVENT_TIMEOUT_MS = 30_000;

/** What the page saw of one session's event stream, each with the page's receipt time (epoch ms, fractional). */
export interface PageReceipts {
  /** Each `delta` of the model's text: the text of `turn` up to `end` was there at `at`. */
  deltas: (TextReceipt & { turn: number })[];
  /** Each `log` event's seq, type and turn, in the order received. */
  log: { seq: number; type: string; turn: number | undefined; at: number }[];
}

/**
 * A real headless Chromium page that reads a session's event stream as a product's page
 * would: `fetch` with the bearer key (EventSource cannot send one), the body read as it
 * arrives, each read stamped with `performance.timeOrigin + performance.now()` before it is
 * parsed. The page is opened on the gateway's own origin (its health route), so the
 * stream is same-origin and needs no CORS.
 */
export interface BrowserViewer {
  /** Starts reading `GET /v1/sessions/{id}/events`; resolves once the first log event is in. */
  follow(sessionId: string): Promise<void>;
  /** Resolves once the page has received a log event of `type` (such as `assistant`) in `turn`. */
  waitForLog(type: string, turn: number, timeoutMs: number): Promise<void>;
  /** Stops reading and returns what was received. */
  stop(): Promise<PageReceipts>;
  close(): Promise<void>;
}

export async function openBrowserViewer(gatewayUrl: string, key: string): Promise<BrowserViewer> {
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page: Page = await browser.newPage();
    await page.goto(new URL('/health', gatewayUrl).href);
    return {
      async follow(sessionId) {
        await page.evaluate(readEventStream, { path: `/v1/sessions/${encodeURIComponent(sessionId)}/events`, key });
        await page.waitForFunction(() => (globalThis as unknown as PageState).__stream.log.length > 0, undefined, { timeout: FIRST_EVENT_TIMEOUT_MS }).catch(async (error: unknown) => {
          const why = await page.evaluate(() => (globalThis as unknown as PageState).__stream.error);
          throw new Error(`the page received no log event of session ${sessionId}${why ? `: ${why}` : ''}`, { cause: error });
        });
      },
      async waitForLog(type, turn, timeoutMs) {
        await page.waitForFunction((want) => (globalThis as unknown as PageState).__stream.log.some((e) => e.type === want.type && e.turn === want.turn), { type, turn }, { timeout: timeoutMs });
      },
      async stop() {
        return page.evaluate(() => {
          const state = (globalThis as unknown as PageState).__stream;
          state.abort.abort();
          return { deltas: state.deltas, log: state.log };
        });
      },
      close: () => browser.close(),
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

interface PageState {
  /** `error`: why the stream ended early (its status, a network failure), for the run's failure message. */
  __stream: PageReceipts & { abort: AbortController; error?: string };
}

/**
 * Runs in the page: reads the stream in the background and keeps what it receives on
 * `window.__stream`. Frames are split on blank lines, as the SSE format says; only `delta`
 * (text channel) and `log` frames are kept, and an `error` or `closed` event as the reason the stream ended.
 */
function readEventStream({ path, key }: { path: string; key: string }): void {
  const state: PageState['__stream'] = { deltas: [], log: [], abort: new AbortController() };
  (globalThis as unknown as PageState).__stream = state;
  void (async () => {
    const response = await fetch(path, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, signal: state.abort.signal });
    if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const at = performance.timeOrigin + performance.now();
      buffered += value;
      const frames = buffered.split(/\r?\n\r?\n/);
      buffered = frames.pop() ?? '';
      for (const frame of frames) {
        let event = 'message';
        let data = '';
        for (const line of frame.split(/\r?\n/)) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trimStart();
        }
        if (event === 'delta') {
          const delta = JSON.parse(data) as { turn: number; channel: string; offset: number; text: string };
          if (delta.channel === 'text') state.deltas.push({ turn: delta.turn, end: delta.offset + delta.text.length, at });
        } else if (event === 'log') {
          const logged = JSON.parse(data) as { seq: number; type: string; turn?: number };
          state.log.push({ seq: logged.seq, type: logged.type, turn: logged.turn, at });
        } else if (event === 'error' || event === 'closed') {
          state.error = `event: ${event} ${data}`;
        }
      }
    }
  })().catch((error: unknown) => {
    if (!state.abort.signal.aborted) state.error = String(error);
  });
}
