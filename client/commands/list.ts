import { ConfigError } from '../../config/config-error';
import { ListStatusSchema, listSessions, type ListStatus } from '../list-sessions';
import { bold, dim, formatCost } from '../output';
import { parseCommandArgs, parseWholeNumber, printJson, withClient, type Command } from './command';

export const listCommand: Command = {
  name: 'list',
  synopsis: 'list [--status running|idle|failed|ended] [--parent ID] [--limit N] [--json]',
  summary:
    "Lists the sessions on this client's task queue (AGENT_TASK_QUEUE), open ones first, from Temporal's visibility store and the " +
    'search attributes every session keeps up to date (AgentStatus, AgentModel, AgentStepCount, AgentCostUsd: COST is - before a priced call and for a model without a price). The UI filters on the same attributes. ' +
    "--parent ID lists only the sub-agents' sessions that session started (docs/sub-agents.md).",
  async run(argv, { env }) {
    const { values } = parseCommandArgs(this, argv, { status: { type: 'string' }, parent: { type: 'string' }, limit: { type: 'string' } }, []);
    let status: ListStatus | undefined;
    if (values.status !== undefined) {
      const parsed = ListStatusSchema.safeParse(values.status);
      if (!parsed.success) throw new ConfigError(parsed.error.issues[0]?.message ?? '--status is invalid');
      status = parsed.data;
    }
    const limit = values.limit === undefined ? 20 : parseWholeNumber('--limit', values.limit, 1, 1000);
    const parent = values.parent?.trim();
    if (parent === '') throw new ConfigError('--parent needs a session id');
    return withClient(env, async (client) => {
      const sessions = await listSessions(client, { taskQueue: env.AGENT_TASK_QUEUE, limit, ...(status ? { status } : {}), ...(parent === undefined ? {} : { parent }) });
      if (values.json) {
        printJson(sessions);
        return 0;
      }
      if (sessions.length === 0) {
        console.log(dim(`no ${status ?? ''} sessions on task queue ${env.AGENT_TASK_QUEUE}${parent === undefined ? '' : ` started by ${parent}`}`.replace('  ', ' ')));
        return 0;
      }
      const rows = [
        ['SESSION', 'STATUS', 'MODEL', 'STEPS', 'COST', 'STARTED'],
        ...sessions.map((s) => [s.workflowId, s.status, s.model ?? '-', String(s.steps), s.costUsd === null ? '-' : formatCost(s.costUsd), s.startTime]),
      ];
      const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
      rows.forEach((row, n) => {
        const line = row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ');
        console.log(n === 0 ? bold(line) : line);
      });
      return 0;
    });
  },
};
