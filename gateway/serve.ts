import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { parseClientEnv } from '../client/config';
import { connectClient } from '../client/sessions';
import { readAllSettings } from '../config/config-error';
import { parseLiveStreamEnv } from '../config/live-stream';
import { createLiveStreamSubscriber } from '../streaming/index';
import { flushClientTracing } from '../tracing/tracing-client';
import { createGateway, type GatewayOptions } from './app';
import { parseGatewayEnv } from './config';
import { readKeysFile } from './keys';

export interface ServedGateway {
  /** `http://host:port`, the port the system chose when 0 was asked for. */
  url: string;
  /** Stops listening, ends open event streams, and stops the gateway's feeds. */
  close(): Promise<void>;
}

/** The gateway on a port of this machine (@hono/node-server). */
export async function serveGateway(options: GatewayOptions & { port?: number; host?: string }): Promise<ServedGateway> {
  const gateway = createGateway(options);
  const host = options.host ?? '127.0.0.1';
  let server: ServerType | undefined;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve({ fetch: gateway.fetch, port: options.port ?? 8787, hostname: host }, resolve);
    server.once('error', reject);
  });
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    async close() {
      const closing = new Promise<void>((resolve) => server?.close(() => resolve()));
      // An event stream never ends by itself: the server would wait for it forever.
      (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
      await closing;
      await gateway.close();
    },
  };
}

/**
 * `npm run gateway` and `agent serve`: the gateway process, configured by the environment
 * (the client's variables, AGENT_GATEWAY_*, AGENT_LIVE_STREAM*), every bad one named in
 * one line. Runs until `signal` fires.
 */
export async function runGateway(processEnv: Record<string, string | undefined>, options: { signal: AbortSignal; log: (line: string) => void; port?: number; host?: string }): Promise<void> {
  const [env, gatewayEnv] = readAllSettings([() => parseClientEnv(processEnv), () => parseGatewayEnv(processEnv)]);
  const [keys, liveStream] = readAllSettings([
    () => readKeysFile(gatewayEnv.AGENT_GATEWAY_KEYS_FILE),
    // The namespace a temporal.toml profile chose names the stream, as the worker's does.
    () => parseLiveStreamEnv(processEnv, { namespace: env.connection.namespace, taskQueue: env.AGENT_TASK_QUEUE }),
  ]);
  const client = await connectClient(env);
  const subscriber = await createLiveStreamSubscriber(liveStream);
  try {
    const served = await serveGateway({
      client,
      env,
      keys,
      subscriber,
      corsOrigins: gatewayEnv.AGENT_GATEWAY_CORS_ORIGINS,
      log: options.log,
      port: options.port ?? gatewayEnv.AGENT_GATEWAY_PORT,
      host: options.host ?? gatewayEnv.AGENT_GATEWAY_HOST,
    });
    options.log(`gateway: listening on ${served.url} (${keys.length} key${keys.length === 1 ? '' : 's'}, task queue ${env.AGENT_TASK_QUEUE}, live stream ${liveStream.mode})`);
    await new Promise<void>((resolve) => {
      if (options.signal.aborted) resolve();
      options.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await served.close();
  } finally {
    await subscriber.close();
    await client.connection.close();
    await flushClientTracing();
  }
}
