import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultSummary, isCompactionRequest } from './compaction';
import { demoReply } from './demo-model';
import { checkedWindow, ContextWindows, requestTokens } from './context-window';
import { CONTROL_PREFIX, handleControl } from './control-api';
import { Holds } from './holds';
import { pairingFaults } from './pairing';
import { isObject, parseJson, readBody, type BodyRead } from './http-io';
import { play } from './playback';
import { planReply } from './plan';
import { RateLimits, type RateLimit } from './rate-limit';
import { rateLimitedReply, rateLimitHeaders } from './rate-limit-wire';
import { ReplyQueues } from './reply-queues';
import { RequestLog, type RecordedReplyKind, type RecordedRequest, type RequestFilter, type RequestPurpose } from './request-log';
import { parseReplies, type ScriptedReply } from './script';
import { anthropic } from './wire/anthropic';
import type { Dialect, RouteMatch } from './wire/dialect';
import { google } from './wire/google';
import { openai } from './wire/openai';

export type { RecordedRequest, RequestFilter, RequestOutcome, RecordedReplyKind, RequestPurpose } from './request-log';
export type { ScriptedReply } from './script';
export type { RateLimit } from './rate-limit';
export { windowPeak, type WindowPeak } from './window-peak';
export type { RequestedOutput } from './wire/structured-output';

/**
 * The scripted LLM: a local HTTP server that speaks the streaming wire formats of
 * Anthropic, OpenAI and Gemini and answers each request with the next scripted reply
 * for its model, or, with none scripted, as the offline demo model (demo-model.ts).
 * The embedded default LLM of `npm start` and the double of every test.
 */
export interface ScriptedLlm {
  /** `http://127.0.0.1:PORT`, the base URL for ANTHROPIC_BASE_URL, OPENAI_BASE_URL and GEMINI_BASE_URL. */
  url: string;
  /** Queues replies for a model (the provider's model string). Throws on an invalid reply. */
  script(model: string, ...replies: ScriptedReply[]): void;
  /**
   * Queues replies for the model's compaction requests (see script.ts), which never take
   * the replies of `script`. With none queued, a compaction request gets a default summary.
   */
  scriptCompaction(model: string, ...replies: ScriptedReply[]): void;
  /** Replies scripted for the model's step requests and not played yet. */
  pending(model: string): number;
  /** Replies scripted for the model's compaction requests and not played yet. */
  pendingCompactions(model: string): number;
  /** Drops the model's unplayed replies, for steps and compactions; returns how many. */
  clear(model: string): number;
  /**
   * Gives the model a context window of `tokens` (JSON characters / 4): a larger request is
   * refused with the provider's context-overflow error and recorded as `over_window`.
   * `null` removes it (the server's default window, if any, applies again).
   */
  setContextWindow(model: string, tokens: number | null): void;
  /** The model's window, its own or the server's default; undefined when it has none. */
  contextWindow(model: string): number | undefined;
  /**
   * Holds the model (`*`: every model without its own) to a sliding window of `windowMs` on
   * requests, input tokens (JSON characters / 4) and output tokens (as its replies report
   * them): a request above one is answered with the provider's own 429 and recorded as
   * `rate_limited` (rate-limit.ts, rate-limit-wire.ts); every response of a limited model
   * carries the provider's rate-limit headers. `null` removes the model's own limit.
   */
  setRateLimit(model: string, limit: RateLimit | null): void;
  /** The model's limit, its own or `*`'s; undefined when it has none. */
  rateLimit(model: string): RateLimit | undefined;
  /** Lets the model's requests held by `hold: true` go on; returns how many were waiting. */
  release(model: string): number;
  requests(filter?: RequestFilter): RecordedRequest[];
  /** Resolves with every matching request once there are at least `n`; rejects after `timeoutMs` (default 10 000). */
  waitForRequests(n: number, filter?: RequestFilter, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Ends every request in flight (recorded `aborted-by-server`) and stops listening. */
  close(): Promise<void>;
}

export interface ScriptedLlmOptions {
  /** Default 0: a free port, which is what tests want. */
  port?: number;
  /** Default `127.0.0.1`. Loopback only: the request log holds API keys and answers anyone who asks. */
  host?: string;
  /** Lets `host` be any address: only for a private container network (docker-compose). */
  allowNonLoopback?: boolean;
  /** Called once per model request when its outcome is known, e.g. to print a log line. */
  onSettled?: (request: RecordedRequest) => void;
  /** A context window (tokens) for every model without one of its own (`setContextWindow`). Default: none. */
  contextWindow?: number;
  /** A rate limit for every model without one of its own (`setRateLimit`). Default: none. */
  rateLimit?: RateLimit;
  /**
   * Default true: a model with nothing scripted (and a name not starting with `echo`) is
   * answered by the offline demo model (demo-model.ts), as a new user's own prompt is.
   * False: refused with a loud 400 naming the model, for a test that wants to know it
   * scripted too few replies.
   */
  demo?: boolean;
  /**
   * Replies scripted for this name answer, in order, every request whose own model has none
   * left: the fake model of durable-agent-worker/testing (testing/fake-model.ts), whose user
   * scripts a conversation whatever model each agent names. Default: none.
   */
  anyModel?: string;
  /**
   * Called as each content frame of a model request is written (model text, thinking, tool
   * arguments), with its request's `seq`, its 0-based `index` among the reply's content
   * frames and `at`, the epoch time in fractional ms (`performance.timeOrigin +
   * performance.now()`, the clock a browser's receipt times use). For a text reply without
   * thinking, content frame `index` is the piece at text offset `index × chunkSize`: how the
   * stream benchmark (bench/stream.ts) times each piece from here to a viewer.
   */
  onContentSent?: (sent: { requestSeq: number; model: string; index: number; at: number }) => void;
}

const DIALECTS: readonly Dialect[] = [anthropic, openai, google];

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export async function startScriptedLlm(opts: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.allowNonLoopback) {
    throw new Error(`scripted LLM: host must be a loopback address (127.0.0.1, ::1, localhost), got "${host}"`);
  }
  const queues = new ReplyQueues();
  const compactions = new ReplyQueues();
  const windows = new ContextWindows(opts.contextWindow === undefined ? undefined : checkedWindow(opts.contextWindow, 'contextWindow'));
  const holds = new Holds();
  const rateLimits = new RateLimits();
  if (opts.rateLimit) rateLimits.set('*', opts.rateLimit);
  const log = new RequestLog();
  const demo = opts.demo ?? true;
  const inflight = new Set<AbortController>();
  const handlers = new Set<Promise<void>>();
  let closing = false;

  /**
   * Picks what to play: the provider's 4xx for a request the fake cannot serve, whose tool
   * calls and results are not paired, or that is above the model's window; for a
   * compaction request its next compaction reply or the default summary; otherwise the
   * next scripted reply, an echo, or the demo model's answer.
   */
  function chooseReply(
    dialect: Dialect,
    url: URL,
    read: BodyRead,
    body: unknown,
    model: string,
    request: { purpose: RequestPurpose; tokens: number; at: number },
  ): { reply: ScriptedReply; replyKind: RecordedReplyKind; headers?: Record<string, string> } {
    const invalid = (status: number, message: string, headers?: Record<string, string>) => ({
      reply: { kind: 'status' as const, status, message, ...(headers ? { headers } : {}) },
      replyKind: 'invalid' as const,
    });
    if (!read.ok) return invalid(413, 'Request body too large for the scripted LLM.', { connection: 'close' });
    if (!isObject(body)) return invalid(400, 'The request body is not a JSON object.');
    if (!model) return invalid(400, 'model: Field required');
    const problem = dialect.problem(body, url);
    if (problem) return invalid(400, problem);
    // As every provider does, and before it counts tokens: a call split from its result is refused.
    const fault = pairingFaults(body).find((f) => f.kind !== 'misnamed_response');
    if (fault) {
      const refusal = dialect.unpaired(fault);
      return { reply: { kind: 'status', status: refusal.status, body: refusal.body as Record<string, unknown> }, replyKind: 'unpaired' };
    }
    // As a provider does: the refusal plays no scripted reply, which waits for a request that fits.
    const window = windows.of(model);
    if (window !== undefined && request.tokens > window) return { reply: { kind: 'context_overflow', contextWindow: window }, replyKind: 'over_window' };
    // As a provider does: a request above a rate limit is refused before it is served, and costs nothing.
    const admission = rateLimits.admit(model, request.at, request.tokens);
    if (admission.limited && !admission.admitted) return { reply: rateLimitedReply(dialect.provider, model, admission, request.at), replyKind: 'rate_limited' };
    const chosen = pickReply(dialect, body, model, request);
    if (!admission.limited) return chosen;
    const { reply } = chosen;
    admission.countOutput(reply.kind === 'status' || reply.kind === 'context_overflow' ? 0 : planReply(reply, model, body).usage.outputTokens);
    return { ...chosen, headers: rateLimitHeaders(dialect.provider, admission.buckets, request.at) };
  }

  /** The reply for a request the server serves: a compaction's, the next scripted one, an echo, the demo model's. */
  function pickReply(dialect: Dialect, body: Record<string, unknown>, model: string, request: { purpose: RequestPurpose }): { reply: ScriptedReply; replyKind: RecordedReplyKind } {

    if (request.purpose === 'compact') {
      const compaction = compactions.shift(model);
      if (compaction) return { reply: compaction, replyKind: compaction.kind };
      return { reply: { kind: 'text', text: defaultSummary(dialect, body) }, replyKind: 'summary' };
    }
    const scripted = queues.shift(model);
    if (scripted) return { reply: scripted, replyKind: scripted.kind };
    const shared = opts.anyModel === undefined ? undefined : queues.shift(opts.anyModel);
    if (shared) return { reply: shared, replyKind: shared.kind };
    if (model.startsWith('echo')) {
      return { reply: { kind: 'text', text: `You said: ${dialect.lastUserText(body)}` }, replyKind: 'echo' };
    }
    if (demo) {
      const reply = demoReply(dialect.provider, body, dialect.requestedOutput(body));
      return { reply, replyKind: reply.kind };
    }
    // Failing loudly: a fake that invents replies hides the bug of a test that scripted too few.
    const remedy =
      opts.anyModel === undefined
        ? `Script one with llm.script("${model}", …) or POST /_scripted/${encodeURIComponent(model)}, or use a model name starting with "echo".`
        : "Script one more with the fake model's reply(…).";
    const message = `scripted LLM: no reply is scripted for model "${model}" (its queue is empty). ${remedy}`;
    return { reply: { kind: 'status', status: 400, message }, replyKind: 'unscripted' };
  }

  async function serveModelRequest(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    dialect: Dialect,
    route: RouteMatch,
    signal: AbortSignal,
    at: number,
  ): Promise<void> {
    const read = await readBody(req);
    const parsed = read.ok ? parseJson(read.text) : undefined;
    // Recorded as sent: the parsed JSON, or the raw text when it was not JSON.
    const body = parsed?.ok ? parsed.value : read.ok ? read.text : undefined;
    const fields = isObject(body) ? body : {};
    const model = route.model ?? dialect.modelFromBody(fields) ?? '';
    const request = { purpose: isCompactionRequest(dialect, fields) ? ('compact' as const) : ('step' as const), tokens: requestTokens(read.ok ? body : '') };
    const { reply, replyKind, headers } = chooseReply(dialect, url, read, parsed?.ok ? body : undefined, model, { ...request, at });
    const output = dialect.requestedOutput(fields);

    const record = log.add({
      at,
      provider: dialect.provider,
      model,
      method: req.method ?? 'POST',
      path: req.url ?? '',
      headers: { ...req.headers },
      body,
      ...(read.ok ? { rawBody: read.text } : {}),
      replyKind,
      ...request,
      ...(output === undefined ? {} : { output }),
    });
    try {
      const onSent = opts.onContentSent;
      const onContentSent = onSent && ((index: number) => onSent({ requestSeq: record.seq, model, index, at: performance.timeOrigin + performance.now() }));
      const outcome = await play(reply, { res, signal, dialect, model, body: fields, holds, ...(onContentSent ? { onContentSent } : {}), ...(headers ? { headers } : {}) });
      log.settle(record, outcome);
    } catch (error) {
      if (signal.aborted) {
        log.settle(record, closing ? 'aborted-by-server' : 'aborted-by-client');
      } else {
        log.settle(record, 'failed');
        throw error;
      }
    } finally {
      opts.onSettled?.({ ...record });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const controller = new AbortController();
    inflight.add(controller);
    // 'close' without 'finish' means the connection went away under us: the client left, or close() cut it.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('the connection closed before the response ended'));
      inflight.delete(controller);
    });
    // A write racing a client that just left must not take the process down; the abort above records it.
    res.on('error', () => {});
    req.on('error', () => {});

    try {
      const url = new URL(req.url ?? '/', 'http://scripted-llm');
      if (url.pathname === CONTROL_PREFIX || url.pathname.startsWith(`${CONTROL_PREFIX}/`)) {
        await handleControl(req, res, url, { queues, compactions, windows, holds, log, rateLimits });
        return;
      }
      for (const dialect of DIALECTS) {
        const route = dialect.match(req.method ?? 'GET', url);
        if (route) return await serveModelRequest(req, res, url, dialect, route, controller.signal, at);
      }
      const body = JSON.stringify({
        error: {
          message:
            `scripted LLM: no route for ${req.method} ${url.pathname}. It serves POST /v1/messages, ` +
            'POST /chat/completions, POST /v1beta/models/{model}:streamGenerateContent?alt=sse and /_scripted/…',
        },
      });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch (error) {
      if (controller.signal.aborted) return;
      process.stderr.write(`scripted LLM: internal error on ${req.method} ${req.url}: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted LLM internal error: ${(error as Error).message}` } }));
      } else {
        res.destroy();
      }
    }
  }

  const server = createServer({ noDelay: true }, (req, res) => {
    const handler = handle(req, res).finally(() => handlers.delete(handler));
    handlers.add(handler);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  return {
    url,
    script(model, ...replies) {
      queues.push(model, parseReplies(model, replies));
    },
    scriptCompaction(model, ...replies) {
      compactions.push(model, parseReplies(model, replies));
    },
    pending: (model) => queues.pending(model),
    pendingCompactions: (model) => compactions.pending(model),
    clear: (model) => queues.clear(model) + compactions.clear(model),
    setContextWindow: (model, tokens) => windows.set(model, tokens),
    contextWindow: (model) => windows.of(model),
    setRateLimit: (model, limit) => rateLimits.set(model, limit),
    rateLimit: (model) => rateLimits.of(model),
    release: (model) => holds.release(model),
    requests: (filter) => log.list(filter),
    waitForRequests: (n, filter, timeoutMs) => log.waitFor(n, filter, timeoutMs),
    async close() {
      if (closing) return;
      closing = true;
      for (const controller of inflight) controller.abort(new Error('the scripted LLM is closing'));
      log.rejectWaiters('the server was closed');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.allSettled([...handlers]);
      await closed;
    },
  };
}
