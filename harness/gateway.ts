/**
 * A gateway in this process on a free port, for the tests, scripts and benchmarks: its own
 * client connection, keys made fresh for it (the secrets returned, as `agent keys new`
 * prints them), and the live stream it is given.
 */
import type { Client } from '@temporalio/client';
import type { LiveStreamSubscriber } from '../contracts/live-stream';
import { parseClientEnv, type ClientEnv } from '../client/config';
import { connectClient } from '../client/sessions';
import { serveGateway } from '../gateway/serve';
import { newGatewayKey, type KeyEntry } from '../gateway/keys';
import type { GatewayOptions } from '../gateway/app';

export interface KeySpec {
  agents: readonly string[] | '*';
  approve?: boolean;
  requestsPerMinute?: number;
}

export interface LocalGatewayOptions extends Pick<GatewayOptions, 'corsOrigins' | 'bodyLimitBytes' | 'defaultRequestsPerMinute' | 'log'> {
  /** `host:port` of the Temporal server. */
  address: string;
  namespace?: string;
  taskQueue: string;
  /** The Temporal UI the answers' uiUrl point into. */
  uiUrl?: string;
  /** The keys to make, by id; default one key `test` with agents "*" that may approve. */
  keys?: Record<string, KeySpec>;
  /** The live stream from the workers (streaming/ createLiveStreamSubscriber); none: the feeds poll Temporal. Closed with the gateway. */
  subscriber?: LiveStreamSubscriber;
}

export interface LocalGateway {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** The secret of each key, by id; `key` is the first one's. */
  secrets: Record<string, string>;
  key: string;
  /** The keys as the keys file would hold them (hashes only). */
  entries: KeyEntry[];
  client: Client;
  env: ClientEnv;
  /** `fetch` of a path with the first key (or `key`, or none with `key: null`); a JSON body given as `json`. */
  request(path: string, init?: RequestInit & { json?: unknown; key?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const env = parseClientEnv({
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_NAMESPACE: options.namespace ?? 'default',
    AGENT_TASK_QUEUE: options.taskQueue,
    ...(options.uiUrl ? { TEMPORAL_UI_URL: options.uiUrl } : {}),
  });
  const made = Object.entries(options.keys ?? { test: { agents: '*', approve: true } }).map(([id, spec]) => ({ id, ...newGatewayKey({ id, ...spec }) }));
  const secrets = Object.fromEntries(made.map(({ id, secret }) => [id, secret]));
  const entries = made.map(({ entry }) => entry);
  const client = await connectClient(env);
  const served = await serveGateway({
    client,
    env,
    keys: entries,
    ...(options.subscriber ? { subscriber: options.subscriber } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.defaultRequestsPerMinute ? { defaultRequestsPerMinute: options.defaultRequestsPerMinute } : {}),
    ...(options.log ? { log: options.log } : {}),
    port: 0,
    host: '127.0.0.1',
  });
  const key = made[0]?.secret ?? '';
  return {
    url: served.url,
    secrets,
    key,
    entries,
    client,
    env,
    request(path, init = {}) {
      const { json, key: chosen, headers, ...rest } = init;
      const bearer = chosen === null ? undefined : (chosen ?? key);
      return fetch(`${served.url}${path}`, {
        ...rest,
        headers: {
          ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
          ...(headers as Record<string, string> | undefined),
        },
        ...(json === undefined ? {} : { body: JSON.stringify(json), method: rest.method ?? 'POST' }),
      });
    },
    async close() {
      await served.close();
      await options.subscriber?.close();
      await client.connection.close();
    },
  };
}
