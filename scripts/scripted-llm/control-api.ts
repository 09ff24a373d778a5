import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Holds } from './holds';
import { parseJson, readBody, sendJson } from './http-io';
import type { ReplyQueues } from './reply-queues';
import type { RequestFilter, RequestLog } from './request-log';
import { parseReplies } from './script';
import type { Provider } from './wire/dialect';

/**
 * The HTTP face of the script API, for a process that did not start the server
 * (`npm run llm`, `npm start`):
 *
 * - `POST   /_scripted/{model}`                 body: a JSON array of replies → `{ model, pending }`
 * - `GET    /_scripted/{model}`                 → `{ model, pending, held }`
 * - `DELETE /_scripted/{model}`                 → `{ model, cleared }`
 * - `GET    /_scripted/requests?model=&provider=` → the recorded requests
 * - `POST   /_scripted/_release?model=…`        → `{ model, released }`
 *
 * `{model}` is URL-encoded and may contain `/`. Names starting with `_`, and `requests`
 * for GET, are the control routes above, so scripts for such models go through the
 * in-process API. Errors answer `{ error: message }`.
 */

export const CONTROL_PREFIX = '/_scripted';

export interface ControlState {
  queues: ReplyQueues;
  holds: Holds;
  log: RequestLog;
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
    return sendJson(res, 200, state.log.list(filter));
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
    return sendJson(res, 404, { error: `no control route ${method} ${url.pathname}; see scripts/scripted-llm/control-api.ts` });
  }

  switch (method) {
    case 'POST': {
      const read = await readBody(req);
      if (!read.ok) return sendJson(res, 413, { error: 'the script is too large' });
      const parsed = parseJson(read.text);
      if (!parsed.ok) return sendJson(res, 400, { error: `the script for model "${model}" is not valid JSON` });
      if (!Array.isArray(parsed.value)) {
        return sendJson(res, 400, { error: `the script for model "${model}" must be a JSON array of replies` });
      }
      try {
        const replies = parseReplies(model, parsed.value);
        return sendJson(res, 200, { model, pending: state.queues.push(model, replies) });
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
    }
    case 'GET':
      return sendJson(res, 200, { model, pending: state.queues.pending(model), held: state.holds.held(model) });
    case 'DELETE':
      return sendJson(res, 200, { model, cleared: state.queues.clear(model) });
    default:
      return sendJson(res, 405, { error: `${method} is not allowed on ${url.pathname}` });
  }
}
