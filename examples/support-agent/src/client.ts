import { Client, Connection } from '@temporalio/client';
import { AgentPlugin } from 'durable-agent-worker/worker';
import { submitTicket } from './tickets.js';

const [id = `T-${Date.now()}`, question = 'Order A-1001 arrived with a torn cover. Can I have my money back?'] = process.argv.slice(2);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
// The plugin gives the client the worker's data converter (and its encryption, when the worker has a key).
const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE, plugins: [new AgentPlugin()] });
console.log(await submitTicket(client, process.env.TASK_QUEUE ?? 'support', { id, question }));
await connection.close();
