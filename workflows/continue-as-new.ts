import { ApplicationFailure, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { SessionConfig, SessionInput, SessionResult } from '../contracts/api';
import type { Budget } from '../contracts/budget';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { jsonBytes } from '../contracts/log-pages';
import { MAX_CARRIED_LOG_BYTES, tailToCarry, toolListCutOff } from './compaction';
import { sessionContextWindow } from '../contracts/model-windows';
import type { SessionEvent, SessionLog } from '../contracts/session-log';
import type { SessionState } from './session-state';
import { atFirstRevision } from '../contracts/session-revision';

/** Temporal suggests it, or the session's own `continueAsNewAfterEvents` is reached. */
export function historyIsLong(config: SessionConfig): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (config.continueAsNewAfterEvents !== undefined && info.historyLength >= config.continueAsNewAfterEvents);
}

/**
 * From revision 2 (contracts/session-revision.ts), a session without its own
 * `continueAsNewAfterEvents` continues as new between turns once its run's history is this
 * long, if the next run's input needs no compaction: a worker that has evicted the session
 * from its cache replays the run before the next message's first LLM request, so the run,
 * not the session, sets what its user waits (a third of a millisecond an event here: 3 700 in 1.2 s,
 * bench/README.md). The cost is two actions per this many events: the next run's start and its idle timer.
 */
export const REPLAY_BOUND_EVENTS = 1_000;

/** The run's history is past REPLAY_BOUND_EVENTS, for a session the bound applies to. */
export function replayIsLong(config: SessionConfig): boolean {
  return !atFirstRevision(config) && config.continueAsNewAfterEvents === undefined && workflowInfo().historyLength >= REPLAY_BOUND_EVENTS;
}

/**
 * Ends this run and starts the next with `next`, as nextRunInput built it: the log's tail
 * (the events after the last compaction's cut), the retry policy, the budget, the
 * session's counts, and the fallback in force, if any. The earlier
 * events stay readable in this run, whose successor names it (`continuedFromRunId`).
 */
export async function continueAsNew(next: SessionInput): Promise<never> {
  assertCarriable(next);
  // A versioned worker (AGENT_DEPLOYMENT_NAME) runs sessions Pinned to its version, so
  // a deploy never replays a running session on new code; here, between runs, is where
  // a session moves: the next run starts on the deployment's current version.
  // Unversioned workers ignore it.
  return makeContinueAsNewFunc<(input: SessionInput) => Promise<SessionResult>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
}

/** The input the next run would be started with now: what `continueAsNew` carries, and what its size is judged on. */
export function nextRunInput(input: SessionInput, config: SessionConfig, events: readonly SessionEvent[], state: SessionState, budget: Budget): SessionInput {
  const carried = { retryPolicy: state.retryPolicy, turnsRun: state.turnsRun, runs: (config.continued?.runs ?? 1) + 1, budget };
  const window = sessionContextWindow(config);
  return {
    ...input,
    // The compaction decisions depend on these; pinned, a worker with another windows table
    // or another default decides as the session started.
    ...(window === null ? {} : { contextWindow: window }),
    compactAt: config.compactAt,
    // Keeps where the session was forked from; its events are part of the log now.
    fork: config.fork && forkedFrom(config.fork),
    continued: { ...carried, ...countsAndTail(events, state) },
  };
}

/** Where the session was forked from, without what its first run was given. */
function forkedFrom(fork: NonNullable<SessionConfig['fork']>): NonNullable<SessionInput['fork']> {
  const { toolsListed: _listed, stepsTaken: _steps, usage: _usage, ...rest } = fork;
  return { ...rest, events: [] };
}

function countsAndTail(events: readonly SessionEvent[], state: SessionState) {
  const tail = tailToCarry(events);
  const cutOff = toolListCutOff(events, tail);
  const { modelInForce } = state;
  return {
    // A fallback in force goes along, whether `fallbackReturnAfterMs` keeps it past its turn or
    // the next turn's start ends it: the next run then records that return like any other.
    // A session on its first model carries nothing, as it did before fallbacks.
    ...(modelInForce.index > 0 ? { modelInForce: { ...modelInForce } } : {}),
    events: tail,
    stepsTaken: state.stepsTaken,
    spend: state.spend,
    usage: state.usage,
    nextTurn: state.nextTurn,
    outcomes: state.outcomesToCarry(),
    ...(cutOff ? { toolsListed: { turn: cutOff.turn, servers: cutOff.servers, tools: cutOff.tools, ...(cutOff.custom ? { custom: cutOff.custom } : {}), ...(cutOff.agents ? { agents: cutOff.agents } : {}) } } : {}),
  };
}

/**
 * A run's first events after what it was carried: the MCP tool list the last run's tail (or
 * a fork's source) left out, recorded again so the same tools are offered without listing
 * the servers.
 */
export function recordCarriedToolList(log: SessionLog, config: SessionConfig, now: number): void {
  // A fork's list only in its first run: a run it continued into was carried its own.
  const listed = config.continued ? config.continued.toolsListed : config.fork?.toolsListed;
  if (listed) log.append({ type: 'tools/listed', ...listed }, now);
}

function assertCarriable(next: SessionInput): void {
  const bytes = jsonBytes(next);
  if (bytes <= MAX_CARRIED_LOG_BYTES) return;
  throw ApplicationFailure.create({
    type: WORKFLOW_ERROR_TYPES.tooLarge,
    message: `the session's state is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the ${MAX_CARRIED_LOG_BYTES / 1024 / 1024} MiB one run can carry into the next; fork it from an earlier event (\`fork --at\`) to go on`,
    nonRetryable: true,
  });
}
