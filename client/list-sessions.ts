import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { z } from 'zod';
import { SESSION_WORKFLOW } from '../contracts/api';
import { AgentCostUsd, AgentModel, AgentStatus, AgentStepCount } from '../contracts/search-attributes';
import { ConfigError } from '../config/config-error';

/**
 * What `list --status` filters on. `running`, `idle` and `failed` (the last turn failed,
 * the session still open) are the session's own AgentStatus while its workflow runs;
 * `ended` is every session that said so or whose workflow is closed, whatever closed it
 * (an `end`, the idle timeout, a terminate).
 */
export const ListStatusSchema = z.enum(['running', 'idle', 'failed', 'ended'], {
  error: (issue) => `--status must be one of running, idle, failed, ended, got ${JSON.stringify(issue.input)}`,
});
export type ListStatus = z.infer<typeof ListStatusSchema>;

export interface ListOptions {
  /** Only sessions on this task queue: the ones this client's `start` creates. */
  taskQueue: string;
  status?: ListStatus;
  /** Only the sub-agents' sessions this session started (docs/sub-agents.md), by Temporal's ParentWorkflowId. */
  parent?: string;
  /** Default 20, at most 1000. */
  limit?: number;
}

export interface SessionSummary {
  workflowId: string;
  runId: string;
  /** `running`, `idle`, `failed` or `ended`; for a closed workflow `ended`, or how it closed when not by itself (`terminated`, `timed_out`, …). */
  status: string;
  model: string | null;
  steps: number;
  /** USD spent by the worker's price table; null before a priced call, or when the model has no price. */
  costUsd: number | null;
  startTime: string;
  closeTime: string | null;
}

/**
 * The visibility query for a listing. Values are quoted by `quote`, never pasted, so an
 * odd task queue name cannot change the query.
 */
export function sessionsQuery(options: Pick<ListOptions, 'taskQueue' | 'status' | 'parent'>): string {
  // A session that continued as new is one workflow id with several runs; its latest run stands for it.
  const clauses = [`WorkflowType = ${quote(SESSION_WORKFLOW)}`, `TaskQueue = ${quote(options.taskQueue)}`, `ExecutionStatus != 'ContinuedAsNew'`];
  const { status } = options;
  if (status === 'ended') clauses.push(`(${AgentStatus.name} = 'ended' OR ExecutionStatus != 'Running')`);
  else if (status !== undefined) clauses.push(`${AgentStatus.name} = ${quote(status)}`, `ExecutionStatus = 'Running'`);
  // A child session is a child workflow of its parent's, so Temporal keeps the parent's id in visibility.
  if (options.parent !== undefined) clauses.push(`ParentWorkflowId = ${quote(options.parent)}`);
  return clauses.join(' AND ');
}

/** Sessions from Temporal's visibility store (open ones first, then the most recently closed), read from the search attributes the session upserts. */
export async function listSessions(client: Client, options: ListOptions): Promise<SessionSummary[]> {
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ConfigError(`--limit must be a whole number from 1 to 1000, got ${limit}`);
  const sessions: SessionSummary[] = [];
  for await (const info of client.workflow.list({ query: sessionsQuery(options), pageSize: Math.min(limit, 100) })) {
    sessions.push(summarize(info));
    if (sessions.length >= limit) break;
  }
  return sessions;
}

function summarize(info: WorkflowExecutionInfo): SessionSummary {
  const attributes = info.typedSearchAttributes;
  const agentStatus = attributes.get(AgentStatus);
  const open = info.status.name === 'RUNNING';
  const closedBy = info.status.name === 'COMPLETED' ? 'ended' : info.status.name.toLowerCase();
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    status: open ? (agentStatus ?? 'running') : closedBy,
    model: attributes.get(AgentModel) ?? null,
    steps: attributes.get(AgentStepCount) ?? 0,
    costUsd: attributes.get(AgentCostUsd) ?? null,
    startTime: info.startTime.toISOString(),
    closeTime: info.closeTime?.toISOString() ?? null,
  };
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
