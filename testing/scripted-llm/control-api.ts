import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContextWindows } from './context-window';
import type { Holds } from './holds';
import { checkedRateLimit, type RateLimits } from './rate-limit';
import { parseJson, readBody, sendJson } from './http-io';
import type { ReplyQueues } from './reply-queues';
import type { RecordedReplyKind, RequestFilter, RequestLog } from './request-log';
import { parseReplies, type ScriptedReply } from './script';
import type { Provider } from './wire/dialect';

/**
 * The HTTP face of the script API, for a process that did not start the server
 * (`npm run llm`, `npm start`):
 *
 * - `POST   /_scripted/{model}`                 body: a JSON array of replies → `{ model, pending }`
 * - `GET    /_scripted/{model}`                 → `{ model, pending, pendingCompactions, held, contextWindow }`
 * - `DELETE /_scripted/{model}`                 → `{ model, cleared }` (step and compaction replies)
 * - `GET    /_scripted/requests?model=&provider=&replyKind=&purpose=` → the recorded requests
 * - `POST   /_scripted/_release?model=…`        → `{ model, released }`
 * - `POST   /_scripted/_compaction?model=…`     body: a JSON array of replies for the model's
 *                                                compaction requests → `{ model, pending }`
 * - `POST   /_scripted/_window?model=…&tokens=N` → `{ model, contextWindow }`: the model's window
 * - `DELETE /_scripted/_window?model=…`         → `{ model, contextWindow }`: its own removed
 *                                                (the server's default, or null)
 * - `POST   /_scripted/_rate_limit?model=…`     body: `{ requests?, inputTokens?, outputTokens?, windowMs }`
 *                                                → `{ model, rateLimit }` (`model=*`: every model
 *                                                without its own; rate-limit.ts)
 * - `DELETE /_scripted/_rate_limit?model=…`     → `{ model, rateLimit }`: its own removed
 *
 * `{model}` is URL-encoded and may contain `/`. Names starting with `_`, and `requests`
 * for GET, are the control routes above, so scripts for such models go through the
 * in-process API. Errors answer `{ error: message }`.
 */

export const CONTROL_PREFIX = '/_scripted';

export interface ControlState {
  queues: ReplyQueues;
  /** Replies for compaction requests, apart from the step replies in `queues`. */
  compactions: ReplyQueues;
  windows: ContextWindows;
  holds: Holds;
  log: RequestLog;
  rateLimits: RateLimits;
}

const PROVIDERS: readonly Provider[] = ['anthropic', 'openai', 'google'];

export async function handleControl(req: IncomingMessage, res: ServerResponse, url: URL, state: ControlState): Promise<void> {
  const rest = url.pathname.slice(CONTROL_PREFIX.length + 1);
  const method = req.method ?? 'GET';

  if (rest === 'requests' && method === 'GET') {
    const filter: RequestFilter = {};
    const model = url.searchParams.get('model');
    const provider = url.searchParams.get('provider');
    if (model !== null) filter.model = model;
    if (provider !== null) {
      if (!PROVIDERS.includes(provider as Provider)) {
        return sendJson(res, 400, { error: `provider must be one of ${PROVIDERS.join(', ')}, got "${provider}"` });
      }
      filter.provider = provider as Provider;
    }
    const replyKind = url.searchParams.get('replyKind');
    if (replyKind !== null) filter.replyKind = replyKind as RecordedReplyKind;
    const purpose = url.searchParams.get('purpose');
    if (purpose !== null) {
      if (purpose !== 'step' && purpose !== 'compact') return sendJson(res, 400, { error: `purpose must be step or compact, got "${purpose}"` });
      filter.purpose = purpose;
    }
    return sendJson(res, 200, state.log.list(filter));
  }

  if (rest === '_compaction' && method === 'POST') {
    const model = url.searchParams.get('model');
    if (!model) return sendJson(res, 400, { error: 'POST /_scripted/_compaction needs ?model=NAME' });
    const replies = await readReplies(req, res, model);
    if (replies) return sendJson(res, 200, { model, pending: state.compactions.push(model, replies) });
    return;
  }

  if (rest === '_window' && (method === 'POST' || method === 'DELETE')) {
    const model = url.searchParams.get('model');
    if (!model) return sendJson(res, 400, { error: `${method} /_scripted/_window needs ?model=NAME` });
    try {
      state.windows.set(model, method === 'DELETE' ? null : Number(url.searchParams.get('tokens') ?? Number.NaN));
    } catch (error) {
      return sendJson(res, 400, { error: (error as Error).message });
    }
    return sendJson(res, 200, { model, contextWindow: state.windows.of(model) ?? null });
  }

  if (rest === '_rate_limit' && (method === 'POST' || method === 'DELETE')) {
    const model = url.searchParams.get('model');
    if (!model) return sendJson(res, 400, { error: `${method} /_scripted/_rate_limit needs ?model=NAME (or *)` });
    if (method === 'DELETE') state.rateLimits.set(model, null);
    else {
      const read = await readBody(req);
      const parsed = read.ok ? parseJson(read.text) : undefined;
      if (!parsed?.ok) return sendJson(res, 400, { error: `the rate limit for model "${model}" is not valid JSON` });
      try {
        state.rateLimits.set(model, checkedRateLimit(model, parsed.value));
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
    }
    return sendJson(res, 200, { model, rateLimit: state.rateLimits.of(model) ?? null });
  }

  if (rest === '_release' && method === 'POST') {
    const model = url.searchParams.get('model');
    if (!model) return sendJson(res, 400, { error: 'POST /_scripted/_release needs ?model=NAME' });
    return sendJson(res, 200, { model, released: state.holds.release(model) });
  }

  let model: string;
  try {
    model = decodeURIComponent(rest);
  } catch {
    return sendJson(res, 400, { error: `the model in ${url.pathname} is not valid URL encoding` });
  }
  if (!model || model.startsWith('_')) {
    return sendJson(res, 404, { error: `no control route ${method} ${url.pathname}; see testing/scripted-llm/control-api.ts` });
  }

  switch (method) {
    case 'POST': {
      const replies = await readReplies(req, res, model);
      if (replies) return sendJson(res, 200, { model, pending: state.queues.push(model, replies) });
      return;
    }
    case 'GET':
      return sendJson(res, 200, {
        model,
        pending: state.queues.pending(model),
        pendingCompactions: state.compactions.pending(model),
        held: state.holds.held(model),
        contextWindow: state.windows.of(model) ?? null,
      });
    case 'DELETE':
      return sendJson(res, 200, { model, cleared: state.queues.clear(model) + state.compactions.clear(model) });
    default:
      return sendJson(res, 405, { error: `${method} is not allowed on ${url.pathname}` });
  }
}

/** The replies in the request's body, or undefined once the error has been answered. */
async function readReplies(req: IncomingMessage, res: ServerResponse, model: string): Promise<ScriptedReply[] | undefined> {
  const read = await readBody(req);
  if (!read.ok) {
    sendJson(res, 413, { error: 'the script is too large' });
    return undefined;
  }
  const parsed = parseJson(read.text);
  if (!parsed.ok) {
    sendJson(res, 400, { error: `the script for model "${model}" is not valid JSON` });
    return undefined;
  }
  if (!Array.isArray(parsed.value)) {
    sendJson(res, 400, { error: `the script for model "${model}" must be a JSON array of replies` });
    return undefined;
  }
  try {
    return parseReplies(model, parsed.value);
  } catch (error) {
    sendJson(res, 400, { error: (error as Error).message });
    return undefined;
  }
}
