import { PendingCallTracker } from './compensation';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import type { SessionLog } from '../contracts/session-log';

const INTERRUPTED = {
  type: WORKFLOW_ERROR_TYPES.interrupted,
  message: 'The session stopped in the middle of this step (terminated, crashed, or cut here by a fork); it was closed by repair.',
};

/**
 * Closes an open tail: a turn, and maybe a step, that began but never ended. Closed
 * history is never touched; only events after the last one are added.
 *
 * An open tail comes from a session terminated or crashed mid-step, or from a fork cut
 * inside a step. A live failure never leaves one: the step driver compensates and closes
 * the step itself, which is why an already closed turn is left exactly as it is here.
 */
export function repairOpenTail(log: SessionLog, now: number): void {
  const events = log.events;
  const lastTurnStart = findLast(events, (e) => e.type === 'turn/start');
  if (!lastTurnStart || events.some((e) => e.type === 'turn/end' && e.turn === lastTurnStart.turn)) return;
  const turn = lastTurnStart.turn;

  const lastStepStart = findLast(events, (e) => e.type === 'step/start' && e.turn === turn);
  if (lastStepStart?.type === 'step/start') {
    const { step } = lastStepStart;
    const inStep = events.filter((e) => 'step' in e && e.turn === turn && e.step === step);
    if (!inStep.some((e) => e.type === 'step/end')) {
      const assistant = inStep.find((e) => e.type === 'assistant');
      if (assistant?.type === 'assistant') {
        const tracker = new PendingCallTracker(assistant.message);
        inStep.forEach((e) => tracker.observe(e));
        for (const r of tracker.compensationResults()) log.append({ type: 'tool/result', turn, step, ...r }, now);
      }
      log.append({ type: 'step/end', turn, step, status: 'interrupted', failure: INTERRUPTED }, now);
    }
  }
  log.append({ type: 'turn/end', turn, status: 'interrupted', failure: INTERRUPTED }, now);
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T;
    if (predicate(item)) return item;
  }
  return undefined;
}
