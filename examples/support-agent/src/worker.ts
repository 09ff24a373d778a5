import { NativeConnection } from '@temporalio/worker';
import { createSupportWorker } from './support-worker.js';

const taskQueue = process.env.TASK_QUEUE ?? 'support';
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
const worker = await createSupportWorker({
  connection,
  namespace: process.env.TEMPORAL_NAMESPACE,
  taskQueue,
  providers: { anthropic: { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL } },
});
console.log(`support worker: polling task queue "${taskQueue}"`);
await worker.run();
