import { CancellationScope } from '@temporalio/workflow';
import type { TurnOutcome } from '../contracts/api';
import { isCancellation, summarizeFailure } from './failure';
import type { FailureSummary } from '../contracts/session-log';
import type { Session } from './session-run';
import { publishStatus, type QueuedMessage } from './session-state';
import { runStep } from './step';
import { currentTraceContext, inSpan } from './trace-spans';
import { withTurnTimeout } from './turn-guards';

/**
 * Runs the turn of one message in its own cancellation scope, under its time limit, and
 * publishes the session's status when it starts and ends. The turn is always closed in the
 * log: a failed or cancelled turn resolves with its failure rather than rejecting, since the
 * session outlives it and the `send` Update reports it.
 */
export async function runTurn(session: Session, { turn, text }: QueuedMessage): Promise<void> {
  const { state, config, turnTraces } = session;
  const scope = new CancellationScope();
  state.turnStarted(turn, scope);
  publishStatus(state);
  const outcome = await turnTraces.run(turn, () => withTurnTimeout(config.turnTimeoutMs, scope, (stoppedBy) => runSteps(session, turn, text, scope, stoppedBy)));
  state.turnEnded(outcome);
  publishStatus(state);
}

/**
 * The turn's steps, until the model answers without asking for tools or `maxSteps` is
 * reached. `stoppedBy` says why the turn was stopped from outside when that was not a
 * `cancel` (its time limit).
 */
async function runSteps(session: Session, turn: number, text: string, scope: CancellationScope, stoppedBy: () => FailureSummary | undefined): Promise<TurnOutcome> {
  session.append({ type: 'turn/start', turn, text });
  try {
    const reason = await scope.run(async () => {
      for (let step = 1; step <= session.config.maxSteps; step++) {
        const ended = await inSpan(`step ${step}`, { 'agent.turn': turn, 'agent.step': step }, currentTraceContext(), () => runStep(session, turn, step, stoppedBy));
        if (ended === 'answered') return 'answered' as const;
      }
      return 'step_limit' as const;
    });
    session.append({ type: 'turn/end', turn, status: 'completed', reason });
    return { turn, status: 'completed', reason };
  } catch (error) {
    const stopped = isCancellation(error) ? stoppedBy() : undefined;
    const failure = stopped ?? summarizeFailure(error);
    const status = isCancellation(error) && !stopped ? 'cancelled' : 'failed';
    session.append({ type: 'turn/end', turn, status, failure });
    return { turn, status, failure };
  }
}
