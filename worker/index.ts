/**
 * `durable-agent-worker/worker` (docs/package.md): the agent's worker inside a program of
 * one's own, on a connection one made. `parseWorkerEnv` reads the same variables as `npm
 * run worker` (docs/configuration.md), refused in one line naming each bad one.
 */
// The agent on a Worker and a Client of one's own (docs/plugin.md).
export { AgentPlugin, type AgentPluginOptions } from './agent-plugin';
export { encryptionKeyFromEnv, type EncryptionKey } from '../encryption/encryption-key';
// What the plugin's `tracing` option takes: OTEL_* read, then the tracer provider started (docs/plugin.md#options).
export { tracingConfigFromEnv } from '../tracing/tracing-config';
export { startTracing, type Tracing } from '../tracing/tracing-provider';
export { createAgentWorker, type AgentWorkerOptions } from './create-worker';
export { parseWorkerEnv, WorkerEnvSchema, type WorkerEnv } from './config';
// What createAgentWorker is given of the files the environment names, read once by the program's main.
export { readWorkerFiles, type WorkerFiles } from './config-files';
// What the plugin's `liveStream` option takes: AGENT_LIVE_STREAM* read, then the publisher made (docs/live-stream.md).
export { parseLiveStreamEnv, type LiveStreamConfig } from '../config/live-stream';
export { createLiveStreamPublisher } from '../streaming';
