/**
 * The package's `durable-agent-worker/gateway`: the HTTP gateway as a library (docs/gateway.md).
 *
 *   import { connectClient, parseClientEnv } from 'durable-agent-worker/client';
 *   import { newGatewayKey, serveGateway } from 'durable-agent-worker/gateway';
 *
 *   const env = parseClientEnv(process.env);
 *   const { secret, entry } = newGatewayKey({ id: 'web', agents: ['support'], approve: true });
 *   const gateway = await serveGateway({ client: await connectClient(env), env, keys: [entry], port: 8787 });
 *   // curl -H "Authorization: Bearer $secret" http://127.0.0.1:8787/v1/agents
 */
export { createGateway, DEFAULT_BODY_LIMIT_BYTES, openApiDocument, type Gateway, type GatewayOptions } from './app';
export { runGateway, serveGateway, type ServedGateway } from './serve';
export { GatewayEnvSchema, parseGatewayEnv, type GatewayEnv } from './config';
export { addKeyToFile, createKeyRing, KEY_PREFIX, KeyEntrySchema, KeysFileSchema, newGatewayKey, readKeysFile, sha256Hex, type KeyEntry, type KeyRing } from './keys';
export { DEFAULT_REQUESTS_PER_MINUTE } from './limits';
export { ErrorBodySchema, GatewayError, type ErrorBody, type GatewayErrorType } from './errors';
export type { GatewayApp, GatewayContext, GatewayKey, RouteModule } from './context';
