import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OpenAPIHono } from '@hono/zod-openapi';
import { serve, type ServerType } from '@hono/node-server';
import type { Client } from '@temporalio/client';
import type { LiveStreamSubscriber } from '../../contracts/live-stream';
import type { GatewayContext, GatewayKey, GatewayVariables } from '../../gateway/context';
import { errorResponse, invalidInput, toGatewayError } from '../../gateway/errors';
import { eventRoutesWith, type EventRouteOptions } from '../../gateway/routes/events';
import { createSessionAccess } from '../../gateway/session-access';
import { createSessionFeeds, type SessionFeeds } from '../../gateway/session-feed';
import { parseLiveStreamEnv } from '../../config/live-stream';
import { createLiveStreamSubscriber } from '../../streaming/index';

/** What the events route sees of the caller: a key that may use every session. */
const KEY: GatewayKey = { id: 'events-test', agents: '*', approve: false };

export interface EventsGateway {
  url: string;
  feeds: SessionFeeds;
  subscriber: LiveStreamSubscriber | undefined;
  /** What a worker process needs to publish to this gateway. */
  workerEnv: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The events route on a real HTTP server, with the gateway's own feeds, session access and
 * errors, and the live stream `liveStream` names. Keys are test/gateway-security.test.ts's
 * subject: here every request is the one key.
 */
export async function startEventsGateway(options: {
  client: Client;
  /** `off`, `embedded` (on a socket of its own), or a NATS broker's `nats://` URL. */
  liveStream: string;
  taskQueue: string;
  route?: EventRouteOptions;
}): Promise<EventsGateway> {
  const { client } = options;
  const dir = options.liveStream === 'embedded' ? await mkdtemp(path.join(tmpdir(), 'events-')) : undefined;
  const workerEnv: Record<string, string> = { AGENT_LIVE_STREAM: options.liveStream, ...(dir ? { AGENT_LIVE_STREAM_SOCKET: path.join(dir, 'live.sock') } : {}) };
  const config = parseLiveStreamEnv(workerEnv, { namespace: client.options.namespace, taskQueue: options.taskQueue });
  const subscriber = config.mode === 'off' ? undefined : await createLiveStreamSubscriber(config);
  const feeds = createSessionFeeds({ client, subscriber });
  const access = createSessionAccess(client);
  const namespace = client.options.namespace;
  const app = new OpenAPIHono<{ Variables: GatewayVariables }>({
    defaultHook: (result) => {
      if (!result.success) throw invalidInput(result.target, result.error);
    },
  });
  app.onError((error, c) => errorResponse(c, toGatewayError(error, namespace)));
  app.use('*', async (c, next) => {
    c.set('key', KEY);
    await next();
  });
  const ctx = { client, feeds, authorizeSession: (key, sessionId) => access.authorize(key, sessionId) } as Pick<GatewayContext, 'client' | 'feeds' | 'authorizeSession'> as GatewayContext;
  eventRoutesWith(options.route)(app, ctx);
  let server: ServerType | undefined;
  const address = await new Promise<AddressInfo>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, resolve);
  });
  return {
    url: `http://127.0.0.1:${address.port}`,
    feeds,
    subscriber,
    workerEnv,
    async close() {
      const closing = new Promise<void>((resolve) => server?.close(() => resolve()));
      (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
      await closing;
      await feeds.close();
      await subscriber?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
