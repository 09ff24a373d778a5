import { describeBudget } from '../budget';
import { bold, dim, formatCost } from '../output';
import { describeRetryPolicy } from '../retry-policy';
import { showSession, type SessionView } from '../session-view';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const showCommand: Command = {
  name: 'show',
  synopsis: 'show <id> [--json]',
  summary:
    "Shows one session: its status, turn and step, model, the settings that differ from the defaults, its spend against its budget and the tool calls waiting for approval with their call ids. " +
    "A closed session shows how and when it closed; when no worker can replay it, what Temporal kept of it. --json prints {workflowId, runId, status, closedAt?, endedBy?, model, agent?, turn, step, phase, queued, stepsTaken, retryPolicy, settings, changedSettings, spend, budget, pendingApprovals, unavailable?}.",
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>']);
    const [id = ''] = positionals;
    return withClient(env, async (client) => {
      const view = await patiently(env, showSession(sessionHandle(client, id), env.modelWindows));
      if (values.json) printJson(view);
      else for (const [label, text] of lines(view)) console.log(`${bold(label.padEnd(LABEL_WIDTH))} ${text}`);
      return 0;
    });
  },
};

const LABEL_WIDTH = 'approvals'.length;

/** The lines a person reads, label first; a line only for what is known. */
function lines(view: SessionView): [string, string][] {
  const rows: [string, string][] = [
    ['session', view.workflowId],
    ['status', statusOf(view)],
  ];
  if (view.turn !== undefined) rows.push(['turn', `${view.turn} · step ${view.step ?? 0}${view.settings ? `/${view.settings.maxSteps}` : ''} · ${plural(view.stepsTaken ?? 0, 'step')} in all`]);
  else if (view.stepsTaken !== null) rows.push(['steps', String(view.stepsTaken)]);
  if (view.agent !== undefined) rows.push(['agent', view.agent]);
  rows.push(['model', `${view.model ?? '-'}${view.modelInForce ? ` ${dim(`· now on its fallback ${view.modelInForce}`)}` : ''}`]);
  if (view.settings) rows.push(['settings', changedOf(view) || dim('defaults')]);
  if (view.spend) rows.push(['spend', view.budget ? describeBudget(view.budget, view.spend) : `${formatCost(view.spend.costUsd)} · ${view.spend.inputTokens + view.spend.outputTokens} tokens`]);
  if (view.unavailable === undefined || view.pendingApprovals.length > 0) {
    rows.push(['approvals', view.pendingApprovals.length === 0 ? dim('none waiting') : view.pendingApprovals.map((a) => `${a.name} #${a.callId} (turn ${a.turn} · step ${a.step})`).join(', ')]);
  }
  if (view.unavailable !== undefined) rows.push(['state', dim(view.unavailable)]);
  return rows;
}

function statusOf(view: SessionView): string {
  if (view.closedAt !== undefined) return `${view.status}${view.endedBy ? ` (${view.endedBy === 'request' ? 'on request' : 'idle timeout'})` : ''} at ${view.closedAt}`;
  if (view.status !== 'running') return `${view.status}${view.queued ? ` · ${view.queued} queued` : ''}`;
  return `running · ${view.phase === 'approval' ? 'waiting for approval' : (view.phase ?? 'running')}${view.queued ? ` · ${view.queued} queued` : ''}`;
}

/** `maxSteps 7 · approvalRequired write_file · retryPolicy off (one attempt per LLM call)`. */
function changedOf(view: SessionView): string {
  const settings = view.settings as Record<string, unknown> | undefined;
  const changed = (view.changedSettings ?? []).map((name) => `${name} ${valueOf(settings?.[name])}`);
  if (view.retryPolicy !== undefined && view.retryPolicy !== 'default') changed.push(`retryPolicy ${describeRetryPolicy(view.retryPolicy)}`);
  return changed.join(' · ');
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

function valueOf(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(',');
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}
