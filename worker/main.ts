import { mkdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { loadConnectionConfig, type TemporalConnectionConfig } from '../connection/connection-config';
import { connectWorkerConnection } from '../connection/connect-worker';
import { ConnectionFailedError } from '../connection/errors';
import { ConfigError, readAllSettings } from '../config/config-error';
import { parseWorkerEnv, type WorkerEnv } from './config';
import { liveStreamConfigOf } from '../config/live-stream';
import { createLiveStreamPublisher } from '../streaming';
import { readWorkerFiles } from './config-files';
import { createAgentWorker } from './create-worker';
import { prebuiltWorkflowBundle } from './workflow-bundle-file';
import { encryptionKeyFromEnv } from '../encryption/data-converter';
import { checkNamespace, NamespaceCheckError } from './namespace-check';
import { armShutdownDeadline } from './shutdown-deadline';
import { tracingConfigFromEnv } from '../tracing/tracing-config';
import { startTracing } from '../tracing/tracing-provider';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'register-search-attributes': { type: 'boolean', default: false } } });
  // Every bad variable of the environment, the connection's and the encryption key's, in one line.
  const [env, temporal, encryption, tracingConfig] = readAllSettings([
    () => parseWorkerEnv(process.env),
    () => loadConnectionConfig(process.env),
    // Optional payload encryption: AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID (encryption/).
    () => encryptionKeyFromEnv(process.env),
    // OpenTelemetry, only when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing/tracing-config.ts).
    () => tracingConfigFromEnv(process.env),
  ]);
  // AGENT_MCP_CONFIG and AGENT_PRICES_FILE, read here only, before connecting: a bad file
  // stops the worker in one line naming the variable and the entry.
  const files = readWorkerFiles(env, process.env);
  // AGENT_WORKFLOW_BUNDLE: made at build time, so the worker starts without webpack.
  const workflowBundle = prebuiltWorkflowBundle(env.AGENT_WORKFLOW_BUNDLE, new Set([...(encryption ? ['encryption' as const] : []), ...(tracingConfig ? ['tracing' as const] : [])]));
  const tracing = tracingConfig && (await startTracing(tracingConfig, 'durable-agent-worker'));
  await mkdir(env.AGENT_WORKSPACE, { recursive: true });
  const connection = await connectWorkerConnection(temporal);
  const dispatcher = new Agent();
  // The live stream to the gateway: it connects behind, and drops what it cannot send (docs/live-stream.md).
  const liveStream = createLiveStreamPublisher(liveStreamConfigOf(env, { namespace: temporal.namespace, taskQueue: env.AGENT_TASK_QUEUE }), { log: (line) => console.log(`worker: ${line}`) });
  const shutdown = armShutdownDeadline(env.AGENT_SHUTDOWN_GRACE_MS, (line) => console.log(line));
  try {
    const registered = await checkNamespace({
      connection,
      namespace: temporal.namespace,
      address: temporal.address,
      register: values['register-search-attributes'] || env.AGENT_REGISTER_SEARCH_ATTRIBUTES,
    });
    if (registered.length > 0) console.log(`worker: registered the search attributes ${registered.join(', ')} in namespace ${temporal.namespace}`);
    const worker = await createAgentWorker({ connection, namespace: temporal.namespace, env, dispatcher, liveStream, ...files, ...(workflowBundle ? { workflowBundle } : {}), ...(encryption ? { encryption } : {}), ...(tracing ? { tracing } : {}) });
    if (tracing) console.log(`worker: traces exported over OTLP/HTTP to ${new URL(tracing.config.endpoint).host} (${tracing.config.protocol})`);
    if (encryption) console.log(`worker: payloads encrypted with AES-256-GCM, key id "${encryption.id}"`);
    if (workflowBundle) console.log('worker: runs the workflow bundle AGENT_WORKFLOW_BUNDLE names');
    console.log(`worker: polling task queue "${env.AGENT_TASK_QUEUE}" on ${describe(temporal, env)}`);
    await worker.run().catch((error: unknown) => {
      // Stopping with the server gone ends run() with the server's error: the stop was asked for.
      if (!shutdown.requested) throw error;
      console.log(`worker: stopped (${firstLine(error)})`);
    });
  } finally {
    await liveStream.close();
    await dispatcher.close();
    await connection.close();
    // The last batch of spans leaves before the process does.
    await tracing?.shutdown();
  }
}

function describe(temporal: TemporalConnectionConfig, env: WorkerEnv): string {
  const security = temporal.security === 'plaintext' ? '' : `, ${temporal.security === 'mtls' ? 'mTLS' : 'TLS'}`;
  const key = temporal.usesApiKey ? ', API key' : '';
  const version = env.AGENT_DEPLOYMENT_NAME ? `, version ${env.AGENT_DEPLOYMENT_NAME}:${env.AGENT_BUILD_ID}` : '';
  return `${temporal.address} (namespace ${temporal.namespace}${security}${key}${version})`;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** Mistakes of configuration or of the namespace are one line; anything else keeps its stack. */
const ONE_LINE_ERRORS = [ConfigError, ConnectionFailedError, NamespaceCheckError];

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(ONE_LINE_ERRORS.some((type) => error instanceof type) ? `worker: ${(error as Error).message}` : error);
    process.exit(1);
  },
);
