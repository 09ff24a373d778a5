import { createRoute } from '@hono/zod-openapi';
import { mayUseAgent } from '../auth';
import type { RouteModule } from '../context';
import { ErrorBodySchema } from '../errors';
import { AgentsSchema } from './session-schemas';

/** `GET /v1/agents`: the agents of the worker that this key may start. */
export const agentRoutes: RouteModule = (app, ctx) => {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/agents',
      tags: ['agents'],
      summary: 'The agents this key may start: name, description, model',
      security: [{ bearer: [] }],
      responses: {
        200: { content: { 'application/json': { schema: AgentsSchema } }, description: "the worker's agents this key may start" },
        401: { content: { 'application/json': { schema: ErrorBodySchema } }, description: 'no bearer key, or not a valid one' },
        429: { content: { 'application/json': { schema: ErrorBodySchema } }, description: "over the key's requests per minute" },
      },
    }),
    async (c) => {
      const key = c.get('key');
      const agents = (await ctx.agents()).filter((agent) => mayUseAgent(key, agent.name));
      return c.json({ agents: agents.map(({ name, description, model }) => ({ name, model, ...(description === undefined ? {} : { description }) })) }, 200);
    },
  );
};
