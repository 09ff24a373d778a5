import type { SessionEvent } from '../../contracts/session-log';

/** A turn's events in order, as their types, with the step for a step's own events: what the turn did. */
export function turnShape(log: readonly SessionEvent[], turn: number): string[] {
  return log.filter((e) => e.turn === turn).map((e) => (e.type === 'step/start' || e.type === 'step/end' || e.type === 'assistant' ? `${e.type} ${e.step}` : e.type));
}

/** A turn whose first step called a tool, and whose second compacted before its LLM call, which answered. */
export const TOOL_STEP_THEN_COMPACTED_ANSWER = [
  'turn/start',
  'step/start 1',
  'assistant 1',
  'tool/call',
  'tool/result',
  'step/end 1',
  'step/start 2',
  'context/compacted',
  'assistant 2',
  'step/end 2',
  'turn/end',
] as const;
