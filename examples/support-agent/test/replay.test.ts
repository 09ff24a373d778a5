import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { AgentPlugin } from 'durable-agent-worker/worker';
import { support } from '../src/agent.js';
import { childSessionId, HISTORIES } from './support/histories.js';
import { quietLogs } from './support/quiet-logs.js';
import { REFUND_TICKET } from './support/refund-ticket.js';

quietLogs();

// A deploy that changes the commands of a ticket or a session still running fails here, not in production.
test('replays the recorded refund ticket and its support session with the plugin', { timeout: 120_000 }, async () => {
  const [ticket, session] = await Promise.all([HISTORIES.ticket, HISTORIES.session].map(async (file) => JSON.parse(await readFile(file, 'utf8'))));
  const histories = [
    { workflowId: `ticket-${REFUND_TICKET.id}`, history: ticket },
    { workflowId: childSessionId(ticket), history: session },
  ];
  const options = { workflowsPath: fileURLToPath(new URL('../src/workflows.js', import.meta.url)), plugins: [new AgentPlugin({ agents: [support] })] };
  const failures: string[] = [];
  for await (const { workflowId, error } of Worker.runReplayHistories(options, histories)) {
    if (error) failures.push(`${workflowId}: ${error.message}`);
  }
  assert.deepEqual(failures, []);
});
