/**
 * `durable-agent-worker/worker` (docs/package.md): the agent's worker inside a program of
 * one's own, on a connection one made. `parseWorkerEnv` reads the same variables as `npm
 * run worker` (docs/configuration.md), refused in one line naming each bad one.
 */
export { createAgentWorker, type AgentWorkerOptions } from './create-worker';
export { parseWorkerEnv, WorkerEnvSchema, type WorkerEnv } from './config';
// What createAgentWorker is given of the files the environment names, read once by the program's main.
export { readWorkerFiles, type WorkerFiles } from './config-files';
