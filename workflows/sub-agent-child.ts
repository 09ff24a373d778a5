import { allHandlersFinished, CancellationScope, CancelledFailure, condition, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import { sendUpdate, type SessionResult, type TurnOutcome } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import type { Spend } from '../contracts/spend';
import { subAgentSpendSignal, type SubAgentParent } from '../contracts/sub-agents';
import type { Session } from './session-run';
import { publishStatus } from './session-state';
import { runTurn } from './turn';

/**
 * A sub-agent's session (its input has `parent`, docs/sub-agents.md): it runs the task its
 * parent's call gave as turn 1 at once, under the call's output schema when it gave one (else
 * the session's own), and ends as soon as that turn has ended, with the turn's answer. It
 * never idles nor waits for `end`: its parent awaits the workflow's result, not a turn.
 *
 * A cancel of the workflow (the parent's call was cancelled, or the parent closed: parent-close
 * policy REQUEST_CANCEL) cancels the turn, whose step compensates as any cancelled step does,
 * and the workflow then ends cancelled, as every session ends on a cancel request.
 */
export async function runSubAgentSession(session: Session, parent: SubAgentParent): Promise<SessionResult> {
  refuseMessages(parent);
  const { state } = session;
  // Every change, its own calls' and its children's signalled spend alike: a grandchild's spend reaches the root live.
  state.onSpendChanged((spend) => tellParent(parent, spend));
  const turn = state.enqueue({ text: parent.task, ...(parent.outputSchema ? { outputSchema: parent.outputSchema } : {}) });
  const message = state.takeNextMessage();
  if (message) await runTurn(session, message);
  const outcome = state.outcome(turn) as TurnOutcome;
  state.requestEnd();
  publishStatus(state, session.config);
  // The turn's end answers a pending `awaitTurn`; the workflow closes after it has, even when a cancel came meanwhile.
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  if (outcome.status === 'cancelled' && CancellationScope.current().consideredCancelled) throw new CancelledFailure('the sub-agent was cancelled by its parent');
  return { ...session.result('request'), answer: { outcome, text: lastAnswerText(session.log.events, turn), spend: { ...state.spend } } };
}

/**
 * A sub-agent's session answers its one task only: a message sent to it is refused by the
 * validator, so it never enters its history.
 */
function refuseMessages(parent: SubAgentParent): void {
  setHandler(
    sendUpdate,
    (_message) => {
      throw new Error(refusal(parent));
    },
    {
      validator: (_message) => {
        throw new Error(refusal(parent));
      },
    },
  );
}

const refusal = (parent: SubAgentParent) => `this is a sub-agent's session (started by ${parent.workflowId}): it runs its one task and accepts no message`;

/**
 * The parent counts this session's spend live (its budget, status and cost): the figure is
 * the whole spend so far, so a signal lost is made good by the next one and by the answer.
 * Not awaited: a parent that has gone (ended, or never there) is no failure of the child's.
 */
function tellParent(parent: SubAgentParent, spend: Readonly<Spend>): void {
  getExternalWorkflowHandle(parent.workflowId)
    .signal(subAgentSpendSignal, { callId: parent.callId, workflowId: workflowInfo().workflowId, spend: { ...spend } })
    .catch(() => undefined);
}

/** The text of the turn's last answer, empty when the model gave none. */
function lastAnswerText(events: readonly SessionEvent[], turn: number): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'assistant' && e.turn === turn) return e.message.text;
  }
  return '';
}
