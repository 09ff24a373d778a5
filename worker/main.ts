import { mkdir } from 'node:fs/promises';
import { NativeConnection } from '@temporalio/worker';
import { Agent } from 'undici';
import { ConfigError, parseWorkerEnv } from './config';
import { createAgentWorker } from './create-worker';
import { EncryptionConfigError, encryptionKeyFromEnv, workerDataConverter } from './encryption/data-converter';

async function main(): Promise<void> {
  const env = parseWorkerEnv(process.env);
  // Optional payload encryption: AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID (worker/encryption/).
  const encryption = encryptionKeyFromEnv(process.env);
  await mkdir(env.AGENT_WORKSPACE, { recursive: true });
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS }).catch((error: unknown) => {
    throw new ConfigError(`cannot reach the Temporal server at ${env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS): ${error instanceof Error ? error.message : String(error)}`);
  });
  const dispatcher = new Agent();
  try {
    const worker = await createAgentWorker({ connection, env, dispatcher, ...(encryption ? { dataConverter: workerDataConverter(encryption) } : {}) });
    if (encryption) console.log(`worker: payloads encrypted with AES-256-GCM, key id "${encryption.id}"`);
    console.log(`worker: polling task queue "${env.AGENT_TASK_QUEUE}" on ${env.TEMPORAL_ADDRESS} (namespace ${env.TEMPORAL_NAMESPACE})`);
    await worker.run();
  } finally {
    await dispatcher.close();
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError || error instanceof EncryptionConfigError ? `worker: ${error.message}` : error);
  process.exit(1);
});
