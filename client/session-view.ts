import { SessionInputSchema, stateQuery, type PendingApproval, type SessionResult, type SessionState } from '../contracts/api';
import type { Budget } from '../contracts/budget';
import type { ModelWindowTable } from '../contracts/model-windows';
import { AgentModel, AgentStepCount } from '../contracts/search-attributes';
import { settingsInForce, type SessionSettings } from '../contracts/session-settings';
import type { Spend } from '../contracts/spend';
import { retryQueryTimeouts } from './query-timeout-retry';
import { knownWindow, type SessionHandle } from './sessions';

/** One session as `show` prints it. */
export interface SessionView {
  workflowId: string;
  runId: string;
  /** The session's own status while its workflow runs; once it closed, `ended`, or how it closed when not by itself (`terminated`, `timed_out`, …), as `list` says it. */
  status: string;
  /** When its workflow closed; absent while it runs. */
  closedAt?: string;
  /** Why a session that ended by itself did: asked to (`end`), or idle for its idle timeout. */
  endedBy?: SessionResult['endedBy'];
  model: string | null;
  /** The fallback that answers the session's calls now, when a step switched to one (docs/fallback.md); absent on the first model. */
  modelInForce?: string;
  /** The worker's agent the session was started as (`start --agent`); absent for one started without. */
  agent?: string;
  /** The session's own state: absent when a closed session's could not be read (no worker replayed it), and then `unavailable` says why. */
  turn?: number;
  step?: number;
  phase?: SessionState['phase'];
  queued?: number;
  stepsTaken: number | null;
  retryPolicy?: SessionState['retryPolicy'];
  /** Every setting in force, defaults filled in. */
  settings?: SessionSettings;
  /** The names of the settings that differ from a session started with only its model (the budget's are in `budget`). */
  changedSettings?: (keyof SessionSettings)[];
  /** null: unknown (a closed session whose state could not be read, or a model without a price: then only its `costUsd` is null). */
  spend: Spend | null;
  budget?: Budget;
  pendingApprovals: PendingApproval[];
  unavailable?: string;
}

/** Shown beside the spend as the live budget, not as settings: `setBudget` changes the budget, never these. */
const BUDGET_SETTINGS = new Set<string>(['budgetUsd', 'budgetTokens', 'budgetWarn']);

/**
 * Reads a session: its own state by the `state` Query, and from Temporal whether its
 * workflow still runs. A closed session's Query is answered by a worker replaying it; when
 * none can, what Temporal keeps is shown instead (how and when it closed, its search
 * attributes, its result), with the reason. Nothing a closed session says waits for a
 * decision: its approvals are not shown, since none can be given.
 */
export async function showSession(handle: SessionHandle, modelWindows?: ModelWindowTable): Promise<SessionView> {
  const description = await handle.describe();
  const base = { workflowId: handle.workflowId, runId: description.runId };
  const open = description.status.name === 'RUNNING';
  if (open) return { ...base, ...fromState(await retryQueryTimeouts(() => handle.query(stateQuery)), modelWindows) };

  const closed = {
    ...base,
    status: description.status.name === 'COMPLETED' ? 'ended' : description.status.name.toLowerCase(),
    ...(description.closeTime ? { closedAt: description.closeTime.toISOString() } : {}),
  };
  // Only a run that ended by itself has a result; one this client cannot read (another payload key) leaves the state to say the rest.
  const result = description.status.name === 'COMPLETED' ? await handle.result().catch(() => undefined) : undefined;
  const ended = result ? { endedBy: result.endedBy } : {};
  try {
    const state = await handle.query(stateQuery);
    return { ...closed, ...ended, ...fromState(state, modelWindows), status: closed.status, phase: 'idle', queued: 0, pendingApprovals: [] };
  } catch (error) {
    const attributes = description.typedSearchAttributes;
    return {
      ...closed,
      ...ended,
      model: attributes.get(AgentModel) ?? null,
      stepsTaken: result?.stepsTaken ?? attributes.get(AgentStepCount) ?? null,
      spend: result?.spend ?? null,
      pendingApprovals: [],
      unavailable: `its state could not be read (${firstLine(error)}); shown from Temporal's record of it`,
    };
  }
}

function fromState(state: SessionState, modelWindows: ModelWindowTable | undefined): Omit<SessionView, 'workflowId' | 'runId'> {
  return {
    status: state.status,
    model: state.model,
    ...(state.modelInForce === undefined ? {} : { modelInForce: state.modelInForce }),
    ...(state.agent ? { agent: state.agent.name } : {}),
    turn: state.turn,
    step: state.step,
    phase: state.phase,
    queued: state.queued,
    stepsTaken: state.stepsTaken,
    retryPolicy: state.retryPolicy,
    settings: state.settings,
    changedSettings: changedSettings(state, modelWindows),
    spend: state.spend,
    budget: state.budget,
    pendingApprovals: state.pendingApprovals,
  };
}

/** Compared with what `start --model M` alone gives: the defaults and the model's window as the client's table knows it. */
function changedSettings(state: SessionState, modelWindows: ModelWindowTable | undefined): (keyof SessionSettings)[] {
  const bare = { model: state.model };
  // The window a start would resolve for the same chain: fallbacks change it, and are listed themselves.
  const window = knownWindow({ ...bare, ...(state.settings.fallbacks ? { fallbacks: state.settings.fallbacks } : {}) }, modelWindows);
  const defaults: Record<string, unknown> = settingsInForce(SessionInputSchema.parse({ ...bare, ...window }));
  return (Object.keys(state.settings) as (keyof SessionSettings)[]).filter(
    (name) => !BUDGET_SETTINGS.has(name) && JSON.stringify(state.settings[name]) !== JSON.stringify(defaults[name]),
  );
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'unknown error';
}
