import { dim, formatEvent, red, yellow } from '../output';
import { watchSession, type WatchEndReason, type WatchItem } from '../watch';
import { parseCommandArgs, sessionHandle, withClient, type Command } from './command';

export const watchCommand: Command = {
  name: 'watch',
  followsLive: true,
  synopsis: 'watch <id> [--until-idle] [--json]',
  summary:
    'Follows a session live: the current step, text as it streams, tool calls running and done, retries ("retrying in 12 s (attempt 3/11): overloaded") and calls waiting for approval. ' +
    'A compaction shows as "turn N · compact · T1 → T2 tokens (through event S)"; a session whose model has no known context window is said once not to compact. ' +
    'A step waiting on a sub-agent follows into its child session: "researcher · step 3/20 · llm … · retrying in 4 s (attempt 2/11): overloaded" (docs/sub-agents.md). ' +
    'Ends when the session ends, or with --until-idle when no turn runs or waits; Ctrl-C stops watching (the session goes on). --json prints one object per line.',
  async run(argv, { env, signal }) {
    const { values, positionals } = parseCommandArgs(this, argv, { 'until-idle': { type: 'boolean', default: false } }, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const printer = values.json ? (item: WatchItem) => console.log(JSON.stringify(item)) : humanWatchPrinter(id);
      const reason = await watchSession(client, sessionHandle(client, id), { untilIdle: values['until-idle'], signal, onItem: printer });
      return reason === 'interrupted' ? 130 : 0;
    });
  },
};

/**
 * Watch items for people: log events on stdout (they are the conversation), progress on
 * stderr (it is commentary, and a pipe of stdout should not fill with spinner lines).
 */
export function humanWatchPrinter(workflowId: string): (item: WatchItem) => void {
  const hinted = new Set<string>();
  let windowTold = false;
  return (item) => {
    switch (item.type) {
      case 'event': {
        const line = formatEvent(item.event);
        if (line !== undefined) console.log(line);
        return;
      }
      case 'progress':
        if (item.contextWindow === null && !windowTold) {
          windowTold = true;
          console.error(yellow(unknownWindowNotice(item.model)));
        }
        for (const line of item.lines) console.error(dim(`… ${line}`));
        for (const approval of item.pendingApprovals) {
          if (hinted.has(approval.callId)) continue;
          hinted.add(approval.callId);
          console.error(
            yellow(`  ${approval.name} ${JSON.stringify(approval.input)} waits for you until ${new Date(approval.deadline).toISOString()}:`) +
              `\n    npm run client -- approve ${workflowId} ${approval.callId}` +
              `\n    npm run client -- deny ${workflowId} ${approval.callId} --reason "…"`,
          );
        }
        return;
      case 'unavailable':
        console.error(red(`… ${item.message}`));
        return;
      case 'end': {
        const text = endText(item.reason, item.executionStatus, workflowId);
        if (text) console.error(dim(text));
        return;
      }
    }
  };
}

/** Said once per watch: a session without a window never compacts, and will meet the model's limit as context_overflow. */
export function unknownWindowNotice(model: string): string {
  return `context window unknown for ${model}: no compaction (set --context-window N)`;
}

function endText(reason: WatchEndReason, executionStatus: string, workflowId: string): string {
  switch (reason) {
    case 'closed':
      return `session ${workflowId} has ended (${executionStatus.toLowerCase()})`;
    case 'idle':
      return `session ${workflowId} is idle`;
    case 'done':
      return '';
    case 'interrupted':
      return `stopped watching; the session goes on: npm run client -- watch ${workflowId}`;
  }
}
