import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { assertMayStart, mayUseAgent } from '../auth';
import type { RouteModule } from '../context';
import { ErrorBodySchema } from '../errors';
import { openTurn } from './open-turn';
import { readTurnResponse, streamTurnResponse } from './turn-feed';
import { ModelListSchema, ResponseCreateSchema, ResponseObjectSchema } from './schemas';

const security = [{ bearer: [] }];
const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBodySchema } } });

const modelsRoute = createRoute({
  method: 'get',
  path: '/v1/models',
  tags: ['openai'],
  summary: 'OpenAI-compatible: the agents this key may start, as models',
  security,
  responses: {
    200: { description: 'the agents, each a model whose id is its name', content: { 'application/json': { schema: ModelListSchema } } },
    401: error('no bearer key, or not a valid one'),
    429: error("over the key's requests per minute"),
  },
});

const responsesRoute = createRoute({
  method: 'post',
  path: '/v1/responses',
  tags: ['openai'],
  summary: "OpenAI-compatible (the Responses API's core): a turn of an agent's session",
  description: [
    '`model` names an agent; `input` is the user message; `previous_response_id` continues that response’s session with a new turn.',
    'Without `stream` the answer is the Response once the turn has ended; with `stream: true` it is the Responses API’s Server-Sent Events, from `response.created` to `response.completed` (or `response.failed`, `response.incomplete`).',
    'The tools the agent ran are `mcp_call` output items. docs/openai-compatible.md.',
  ].join(' '),
  security,
  request: { body: { required: true, content: { 'application/json': { schema: ResponseCreateSchema } } } },
  responses: {
    200: {
      description: 'the turn as a Response, or its events (text/event-stream) with `stream: true`',
      content: { 'application/json': { schema: ResponseObjectSchema }, 'text/event-stream': { schema: z.string() } },
    },
    400: error('a field the endpoint does not take, or a bad value; the message names it'),
    401: error('no bearer key, or not a valid one'),
    403: error('the key may not start this agent, or use the session of `previous_response_id`'),
    404: error('no agent of that name, or no session of `previous_response_id`'),
    409: error('the session of `previous_response_id` has ended or takes no message'),
    413: error('the body is over the size limit'),
    429: error("over the key's requests per minute"),
  },
});

/**
 * `GET /v1/models` and `POST /v1/responses`: the OpenAI Responses API's core over the
 * session API, so any OpenAI SDK is a client of a durable agent. Errors keep the gateway's
 * body, which carries OpenAI's `param` and `code` on these paths (errors.ts): each
 * status raises the SDK's own typed error.
 */
export const openAiRoutes: RouteModule = (app, ctx) => {
  app.openapi(modelsRoute, async (c) => {
    const key = c.get('key');
    const agents = (await ctx.agents()).filter((agent) => mayUseAgent(key, agent.name));
    // An agent has no creation time: 0 says so rather than make one up.
    return c.json({ object: 'list' as const, data: agents.map((agent) => ({ id: agent.name, object: 'model' as const, created: 0, owned_by: 'durable-agent-worker' })) }, 200);
  });

  app.openapi(responsesRoute, async (c) => {
    const request = c.req.valid('json');
    const key = c.get('key');
    if (!request.previous_response_id) assertMayStart(key, request.model);
    const turn = await openTurn(ctx, key, request);
    if (!request.stream) return c.json(await readTurnResponse(ctx, turn), 200);
    return streamSSE(c, (stream) => streamTurnResponse(ctx, turn, stream));
  });
};
