import { CancellationScope } from '@temporalio/workflow';
import type { TurnOutcome } from '../contracts/api';
import { isCancellation, summarizeFailure } from './failure';
import type { FailureSummary } from '../contracts/session-log';
import type { Session } from './session-run';
import { publishStatus, type QueuedMessage } from './session-state';
import { runStep } from './step';
import { handedOffAfterStep } from './handoff';
import { statusChanged } from './status-sink';
import { outputSpecOf, TurnOutput } from './turn-output';
import { currentTraceContext, inSpan } from './trace-spans';
import { withTurnTimeout } from './turn-guards';

/**
 * Runs the turn of one message in its own cancellation scope, under its time limit, and
 * publishes the session's status when it starts and ends. The turn is always closed in the
 * log: a failed or cancelled turn resolves with its failure rather than rejecting, since the
 * session outlives it and the `send` Update reports it.
 */
export async function runTurn(session: Session, message: QueuedMessage): Promise<void> {
  const { state, config, turnTraces } = session;
  const { turn } = message;
  const scope = new CancellationScope();
  state.turnStarted(turn, scope);
  publishStatus(state, config);
  const outcome = await turnTraces.run(turn, () => withTurnTimeout(config.turnTimeoutMs, scope, (stoppedBy) => runSteps(session, message, scope, stoppedBy)));
  state.turnEnded(outcome);
  publishStatus(state, config);
  statusChanged({ kind: 'turn_idle', turn, step: state.step, status: outcome.status, spend: { ...state.spend }, budget: { ...session.budget.budget } });
}

/**
 * The turn's steps, until the model answers without asking for tools or `maxSteps` is
 * reached. `stoppedBy` says why the turn was stopped from outside when that was not a
 * `cancel` (its time limit).
 *
 * Under an output schema (the message's, else the session's, recorded in `turn/start`) the
 * answer must match it: one that does not is recorded as `output/rejected`, which the
 * next step sends the model as its repair request; that step is a step like any other,
 * counted towards `maxSteps` and the budget (an invalid answer on the last step fails the turn).
 */
async function runSteps(session: Session, message: QueuedMessage, scope: CancellationScope, stoppedBy: () => FailureSummary | undefined): Promise<TurnOutcome> {
  const { turn, text } = message;
  const spec = outputSpecOf(message, session.config);
  session.append({ type: 'turn/start', turn, text, ...(spec ? { output: spec } : {}) });
  try {
    const output = spec && new TurnOutput(spec, session.config.outputRetries);
    const ended = await scope.run(async () => {
      for (let step = 1; step <= session.config.maxSteps; step++) {
        const stepEnded = await inSpan(`step ${step}`, { 'agent.turn': turn, 'agent.step': step }, currentTraceContext(), () => runStep(session, turn, step, stoppedBy));
        if (stepEnded === 'continue') {
          // A call handed the conversation over (./handoff.ts): this turn ends with it.
          if (handedOffAfterStep(session, turn, step)) return { reason: 'handoff' as const };
          continue;
        }
        if (!output) return { reason: 'answered' as const };
        const verdict = output.judge(stepEnded.answer, step === session.config.maxSteps);
        if (verdict.ok) return { reason: 'answered' as const, output: verdict.value };
        session.append({ type: 'output/rejected', turn, step, errors: verdict.errors });
      }
      return { reason: 'step_limit' as const };
    });
    session.append({ type: 'turn/end', turn, status: 'completed', ...ended });
    const handed = session.state.handedOffTo;
    return { turn, status: 'completed', ...ended, ...(handed ? { handedOffTo: { ...handed.to } } : {}) };
  } catch (error) {
    const stopped = isCancellation(error) ? stoppedBy() : undefined;
    const failure = stopped ?? summarizeFailure(error);
    const status = isCancellation(error) && !stopped ? 'cancelled' : 'failed';
    session.append({ type: 'turn/end', turn, status, failure });
    return { turn, status, failure };
  }
}
