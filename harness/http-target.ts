import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server for the `http_request` tool to call in crash, soak and secrets
 * tests: it records every request it sees (headers included, so a test can check the
 * `Idempotency-Key`), and answers each one as the test's plan says, or holds it open
 * until released, or until the client goes away (a killed worker).
 *
 * Loopback only, like the scripted LLM: it answers anyone who asks.
 */

export interface TargetRequest {
  /** 1, 2, 3… in order of arrival. */
  seq: number;
  /** How many requests to this path came before this one: 0 for the first. */
  nth: number;
  at: number;
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `answered`: the response was sent; `closed`: the client went away first; `pending`: neither yet. */
  outcome: 'pending' | 'answered' | 'closed';
}

export interface TargetReply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (the client may give up first). */
  delayMs?: number;
}

/** What to do with a request: answer it, or `hold` it until `release(path)` or until its client goes away. */
export type TargetPlan = (request: TargetRequest) => TargetReply | 'hold';

export interface HttpTarget {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** `127.0.0.1:PORT`, the entry for AGENT_HTTP_ALLOWLIST. */
  host: string;
  /** Copies, newest outcome included; only those whose path starts with `prefix` when given. */
  requests(prefix?: string): TargetRequest[];
  /** Resolves once at least `n` requests whose path starts with `prefix` have arrived. */
  waitFor(prefix: string, n?: number, timeoutMs?: number): Promise<TargetRequest[]>;
  /** Answers the held requests of this exact path with `reply`; returns how many there were. */
  release(path: string, reply?: TargetReply): number;
  close(): Promise<void>;
}

/** Requests bodies are read up to this; the tool caps its own bodies at 1 MB. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export async function startHttpTarget(plan: TargetPlan = () => ({ status: 200, body: 'ok' })): Promise<HttpTarget> {
  const records: TargetRequest[] = [];
  const held = new Map<string, Set<(reply: TargetReply) => void>>();
  const waiters = new Set<() => void>();
  const perPath = new Map<string, number>();

  const answer = (res: ServerResponse, record: TargetRequest, reply: TargetReply) => {
    if (res.destroyed || res.writableEnded) return;
    const body = reply.body ?? '';
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...reply.headers });
    res.end(body, () => {
      if (record.outcome === 'pending') record.outcome = 'answered';
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
    }
    const path = req.url ?? '/';
    const nth = perPath.get(path) ?? 0;
    perPath.set(path, nth + 1);
    const record: TargetRequest = {
      seq: records.length + 1,
      nth,
      at: Date.now(),
      method: req.method ?? 'GET',
      path,
      headers: { ...req.headers },
      body: Buffer.concat(chunks).toString('utf8'),
      outcome: 'pending',
    };
    records.push(record);
    res.on('close', () => {
      if (record.outcome === 'pending' && !res.writableFinished) record.outcome = 'closed';
    });
    for (const wake of waiters) wake();

    const decided = plan(record);
    if (decided === 'hold') {
      const set = held.get(path) ?? new Set();
      held.set(path, set);
      const release = (reply: TargetReply) => {
        set.delete(release);
        answer(res, record, reply);
      };
      set.add(release);
      res.on('close', () => set.delete(release));
      return;
    }
    if (decided.delayMs) await new Promise((resolve) => setTimeout(resolve, decided.delayMs));
    answer(res, record, decided);
  };

  const server = createServer((req, res) => {
    res.on('error', () => {});
    req.on('error', () => {});
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const matching = (prefix?: string) => records.filter((r) => prefix === undefined || r.path.startsWith(prefix)).map((r) => ({ ...r }));

  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests: matching,
    waitFor(prefix, n = 1, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = matching(prefix);
          if (found.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`http target: waited ${timeoutMs} ms for ${n} request(s) to ${prefix}, saw ${matching(prefix).length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    release(path, reply = { status: 200, body: 'released' }) {
      const set = held.get(path);
      if (!set) return 0;
      const releases = [...set];
      for (const release of releases) release(reply);
      return releases.length;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
