import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Dispatcher } from 'undici';
import { expect } from 'vitest';
import { PROVIDER_STREAMS } from '../../activities/llm/providers';
import type { AssistantMessage, LlmRequest } from '../../contracts/messages';
import type { ProviderId } from '../../contracts/model-ref';

/**
 * Streams recorded from the real Anthropic, OpenAI and Gemini APIs, kept beside the
 * project (never copied into it): `../shared/real-streams/fixtures`, one SSE `data:`
 * payload per line. CI always has the folder (`.ci/run` fails without it); a clone that
 * lacks it skips the tests that read it, and says so.
 */
export const FIXTURES_DIR = resolve(__dirname, '../../../shared/real-streams/fixtures');
export const fixturesPresent = existsSync(FIXTURES_DIR);
export const FIXTURES_MISSING = `real-stream fixtures skipped: ${FIXTURES_DIR} does not exist (CI always has ../shared/real-streams/fixtures; this clone does not)`;

export type Framing = 'anthropic' | 'openai' | 'google';

/** The fixture's payloads, one per non-empty line, exactly as recorded (padding included). */
export function fixtureLines(name: string): string[] {
  return readFileSync(resolve(FIXTURES_DIR, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/**
 * The body the real API sends for these payloads: Anthropic names every event
 * (`event:` then `data:`), OpenAI ends with `data: [DONE]`, Gemini ends each event with
 * `\r\n\r\n`.
 */
export function frameAsApi(lines: string[], framing: Framing): Buffer {
  const frames = lines.map((line) => {
    if (framing === 'anthropic') return `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`;
    if (framing === 'openai') return `data: ${line}\n\n`;
    return `data: ${line}\r\n\r\n`;
  });
  if (framing === 'openai') frames.push('data: [DONE]\n\n');
  return Buffer.from(frames.join(''), 'utf8');
}

export type SplitKind = 'inside data:' | 'mid-line' | 'inside a UTF-8 character' | 'between CR and LF';

/**
 * Offsets where the body is cut, each of a kind a real network produces and a careless
 * parser trips on: inside the `data:` field name, in the middle of a JSON line, between
 * the bytes of one multi-byte UTF-8 character, between the CR and LF of a line ending.
 * A kind the body cannot have (no CRLF, no multi-byte character) is left out.
 */
export function awkwardSplits(body: Buffer): Map<number, SplitKind> {
  const splits = new Map<number, SplitKind>();
  const dataAt: number[] = [];
  for (let i = body.indexOf('data:'); i >= 0; i = body.indexOf('data:', i + 1)) dataAt.push(i);
  for (const i of [dataAt[0], dataAt[Math.floor(dataAt.length / 2)], dataAt[dataAt.length - 1]]) {
    if (i !== undefined) splits.set(i + 2, 'inside data:');
  }
  for (const i of dataAt.slice(0, 3)) {
    const end = body.indexOf('\n', i);
    if (end > i + 10) splits.set(i + Math.floor((end - i) / 2), 'mid-line');
  }
  const lead = body.findIndex((b) => b >= 0xc0);
  if (lead >= 0) splits.set(lead + 1, 'inside a UTF-8 character');
  const threeByte = body.findIndex((b) => b >= 0xe0);
  if (threeByte >= 0) splits.set(threeByte + 2, 'inside a UTF-8 character');
  const crlf = body.indexOf('\r\n');
  if (crlf >= 0) splits.set(crlf + 1, 'between CR and LF');
  return splits;
}

/** Counts the bytes the client has read, so the server writes the next piece only once the last one arrived. */
export class ReadBarrier {
  private seen = 0;
  /** Every total the client has reported: a split at an offset took effect iff the offset is here. */
  readonly totals: number[] = [];
  private waiters: { at: number; resolve: () => void }[] = [];

  reset(): void {
    this.seen = 0;
    this.totals.length = 0;
    this.releaseAll();
  }

  /** The adapter's `onProgress` bytes: a running total. */
  read(total: number): void {
    if (total === this.seen) return;
    this.seen = total;
    this.totals.push(total);
    this.waiters = this.waiters.filter((w) => (w.at <= total ? (w.resolve(), false) : true));
  }

  reached(at: number): Promise<void> {
    if (this.seen >= at) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ at, resolve }));
  }

  releaseAll(): void {
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }
}

export interface FixtureServer {
  url: string;
  barrier: ReadBarrier;
  /** What the next request gets: the body and where to cut it. */
  serve(body: Buffer, splits: Iterable<number>): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server that answers every POST with the body given to `serve`, written in
 * the pieces its split offsets make. After each piece it waits until the client has read
 * up to that offset, so no two pieces can reach the client's parser as one.
 */
export async function startFixtureServer(): Promise<FixtureServer> {
  const barrier = new ReadBarrier();
  let next: { body: Buffer; splits: number[] } = { body: Buffer.alloc(0), splits: [] };
  const server: Server = createServer({ noDelay: true }, (req, res) => {
    req.resume();
    req.on('end', () => {
      void (async () => {
        const { body, splits } = next;
        // A client that stops reading early (after its terminal event) closes the connection.
        res.on('close', () => barrier.releaseAll());
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let from = 0;
        for (const at of splits) {
          if (res.destroyed) return;
          res.write(body.subarray(from, at));
          await barrier.reached(at);
          from = at;
        }
        res.end(body.subarray(from));
      })();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    barrier,
    serve(body, splits) {
      barrier.reset();
      next = { body, splits: [...splits].filter((s) => s > 0 && s < body.length).sort((a, b) => a - b) };
    },
    close: () =>
      new Promise<void>((ok) => {
        barrier.releaseAll();
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/**
 * Streams `body` from `server` through the provider's adapter, cut at every awkward split,
 * and checks each cut reached the parser as a cut (the client's running byte count stopped
 * there). Returns the message the adapter made of it, and the splits it was cut at.
 */
export async function playCut(server: FixtureServer, dispatcher: Dispatcher, provider: ProviderId, body: Buffer, request: LlmRequest): Promise<{ message: AssistantMessage; splits: Map<number, SplitKind> }> {
  const splits = awkwardSplits(body);
  server.serve(body, splits.keys());
  const message = await PROVIDER_STREAMS[provider](request, {
    dispatcher,
    baseUrl: provider === 'openai' ? `${server.url}/v1` : server.url,
    apiKey: undefined,
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    onProgress: (p) => server.barrier.read(p.bytes),
  });
  for (const at of splits.keys()) expect(server.barrier.totals).toContain(at);
  return { message, splits };
}
