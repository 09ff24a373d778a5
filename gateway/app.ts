import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Client } from '@temporalio/client';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { LiveStreamSubscriber } from '../contracts/live-stream';
import type { ClientEnv } from '../client/config';
import { VERSION } from '../contracts/version';
import { authMiddleware } from './auth';
import { cachedAgentCatalogue } from './agent-catalogue';
import type { GatewayApp, GatewayContext, GatewayVariables, RouteModule } from './context';
import { errorResponse, GatewayError, invalidInput, toGatewayError } from './errors';
import { createKeyRing, type KeyEntry, type KeyRing } from './keys';
import { createRateLimiter } from './limits';
import { openAiRoutes } from './openai/routes';
import { pageRoutes } from './page/routes';
import { agentRoutes } from './routes/agents';
import { eventRoutes } from './routes/events';
import { sessionRoutes } from './routes/sessions';
import { createSessionAccess } from './session-access';
import { createSessionFeeds } from './session-feed';

/** A request body larger than this is refused with 413 before it is read whole. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export interface GatewayOptions {
  /** The client library's connection (connectClient), closed by its owner, not by the gateway. */
  client: Client;
  env: ClientEnv;
  /** The keys file's entries (readKeysFile), or a ring made of them. */
  keys: readonly KeyEntry[] | KeyRing;
  /** The live stream from the workers (streaming/); without one the feeds read the log from Temporal every 2 s. */
  subscriber?: LiveStreamSubscriber;
  /** Browser origins allowed to call the API (CORS); none by default. */
  corsOrigins?: readonly string[];
  /** Default 1 MiB. */
  bodyLimitBytes?: number;
  /** For a key whose entry sets no requestsPerMinute; default 600. */
  defaultRequestsPerMinute?: number;
  /** Where the access log goes (one line a request: method, path, status, key id, ms); nowhere by default. Never a secret. */
  log?: (line: string) => void;
}

export interface Gateway {
  app: GatewayApp;
  fetch: (request: Request) => Response | Promise<Response>;
  /** Stops the session feeds; the client and the subscriber stay their owner's to close. */
  close(): Promise<void>;
}

/** The route modules, mounted in this order on the one app. */
const ROUTES: readonly RouteModule[] = [agentRoutes, sessionRoutes, eventRoutes, openAiRoutes, pageRoutes];

/**
 * The gateway as a Hono app: the session API, its event stream, the OpenAI-compatible
 * endpoint and the chat page, behind bearer keys. Every request passes, in order: CORS
 * (its preflight answered before any key is asked for), the body limit, the key and its
 * request limit, then the route's own zod schemas.
 */
export function createGateway(options: GatewayOptions): Gateway {
  const { client, env } = options;
  const keys = 'verify' in options.keys ? options.keys : createKeyRing(options.keys);
  const log = options.log ?? (() => undefined);
  const app: GatewayApp = new OpenAPIHono<{ Variables: GatewayVariables }>({
    defaultHook: (result) => {
      if (!result.success) throw invalidInput(result.target, result.error);
    },
  });

  app.onError((error, c) => {
    const answered = toGatewayError(error, env.connection.namespace);
    if (answered.type === 'internal') log(`gateway: ${c.req.method} ${c.req.path} failed: ${firstLine(error)}`);
    return errorResponse(c, answered);
  });
  app.notFound((c) => errorResponse(c, new GatewayError('not_found', `no route ${c.req.method} ${c.req.path}`)));

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    // The key's id, never its secret; the path, never the query.
    const key = c.get('key') as GatewayVariables['key'] | undefined;
    log(`gateway: ${c.req.method} ${c.req.path} ${c.res.status} ${key?.id ?? '-'} ${Math.round(performance.now() - started)} ms`);
  });
  const origins = new Set(options.corsOrigins ?? []);
  if (origins.size > 0) {
    app.use(
      '*',
      cors({
        origin: (origin) => (origins.has(origin) ? origin : null),
        allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
        allowMethods: ['GET', 'POST', 'PUT', 'OPTIONS'],
        exposeHeaders: ['Retry-After'],
        maxAge: 600,
      }),
    );
  }
  const maxSize = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  app.use('*', bodyLimit({ maxSize, onError: (c) => errorResponse(c, new GatewayError('payload_too_large', `body: at most ${maxSize} bytes`)) }));
  app.use('*', authMiddleware({ keys, limiter: createRateLimiter(), ...(options.defaultRequestsPerMinute === undefined ? {} : { defaultRequestsPerMinute: options.defaultRequestsPerMinute }) }));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A gateway key (`agent keys new`): the secret printed once, stored only as its SHA-256 in the keys file.',
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/health',
      tags: ['gateway'],
      summary: 'Whether the gateway is up (no key needed)',
      security: [],
      responses: { 200: { content: { 'application/json': { schema: z.object({ ok: z.literal(true) }) } }, description: 'up' } },
    }),
    (c) => c.json({ ok: true as const }, 200),
  );

  const access = createSessionAccess(client);
  const feeds = createSessionFeeds({ client, subscriber: options.subscriber });
  const ctx: GatewayContext = {
    client,
    env,
    feeds,
    authorizeSession: (key, sessionId) => access.authorize(key, sessionId),
    rememberSession: (sessionId, agent) => access.remember(sessionId, agent),
    sessionAgent: (sessionId) => access.agentOf(sessionId),
    agents: cachedAgentCatalogue(client, env),
  };
  for (const mount of ROUTES) mount(app, ctx);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/openapi.json',
      tags: ['gateway'],
      summary: 'This document: OpenAPI 3.1, generated from the routes’ zod schemas',
      security: [{ bearer: [] }],
      responses: { 200: { content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } }, description: 'the OpenAPI document' } },
    }),
    (c) => c.json(openApiDocument(app), 200),
  );

  return { app, fetch: (request) => app.fetch(request), close: () => feeds.close() };
}

/** The OpenAPI 3.1 document of every route the app declares. */
export function openApiDocument(app: GatewayApp): Record<string, unknown> {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'durable-agent-worker gateway',
      version: VERSION,
      description: 'Sessions of durable agents on Temporal over HTTP: start, message, follow live, approve, fork, end. docs/gateway.md.',
    },
    security: [{ bearer: [] }],
  }) as unknown as Record<string, unknown>;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'unknown error';
}
