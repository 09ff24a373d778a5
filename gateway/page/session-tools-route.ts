import { createRoute, z } from '@hono/zod-openapi';
import { sessionTools } from '../../client/session-tools';
import type { agentSession } from '../../workflows/session';
import type { RouteModule } from '../context';

/**
 * `GET /v1/sessions/{id}/tools`: the tools a session offers, each with the lane its calls
 * run in, as `agent tools` lists them (client/session-tools.ts). The log records a call's
 * name, not its lane, so this is how the chat page labels a call read-only (may run in
 * parallel, retried) or side-effecting (alone, once, with an idempotency key). One Query
 * per call: the page asks when it opens a session and when the log lists new tools.
 */
const SessionToolSchema = z.object({
  name: z.string(),
  /** `read-only`, `side-effecting`, or the rule of a tool whose input decides (http_request per method, a custom tool's `sideEffects`). */
  lane: z.string(),
  /** Whether its calls wait for a human decision. */
  approval: z.boolean(),
  server: z.string().optional(),
  tool: z.string().optional(),
  custom: z.literal(true).optional(),
});

const route = createRoute({
  method: 'get',
  path: '/v1/sessions/{id}/tools',
  summary: 'The tools a session offers, with their lanes',
  security: [{ bearer: [] }],
  request: { params: z.object({ id: z.string().min(1) }) },
  responses: {
    200: { description: 'The tools, built-in ones first', content: { 'application/json': { schema: z.object({ tools: z.array(SessionToolSchema) }) } } },
  },
});

export const sessionToolsRoute: RouteModule = (app, ctx) => {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.authorizeSession(c.get('key'), id);
    return c.json({ tools: await sessionTools(ctx.client.workflow.getHandle<typeof agentSession>(id)) }, 200);
  });
};
