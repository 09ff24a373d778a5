import type { TurnOutcome } from '../../contracts/api';
import type { SessionEvent } from '../../contracts/session-log';

/**
 * What "no data lost" means for one session, checked on its log after it ended. Each
 * violation is a sentence naming the session and what is wrong; the soak must find none.
 */

export interface SessionEvidence {
  workflowId: string;
  /** Every message sent, with the turn outcome `send` returned, or the error it threw instead. */
  sends: { outcome?: Pick<TurnOutcome, 'status' | 'turn'>; error?: string }[];
  /** The log after the session ended, or why it could not be read. */
  events?: readonly SessionEvent[];
  readError?: string;
  /** The workflow's result after `end`, or why there was none. */
  turnsInResult?: number;
  resultError?: string;
}

export function sessionViolations(evidence: SessionEvidence): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${evidence.workflowId}: ${what}`);

  evidence.sends.forEach((send, i) => {
    if (!send.outcome) say(`message ${i + 1} got no turn outcome: ${send.error ?? 'no answer'}`);
  });
  if (evidence.resultError !== undefined) say(`did not end cleanly: ${evidence.resultError}`);
  else if (evidence.turnsInResult !== undefined && evidence.turnsInResult !== evidence.sends.length) {
    say(`its result counts ${evidence.turnsInResult} turns for ${evidence.sends.length} messages`);
  }
  const events = evidence.events;
  if (!events) {
    say(`its log could not be read: ${evidence.readError ?? 'unknown'}`);
    return problems;
  }

  events.forEach((e, i) => {
    if (e.seq !== i) say(`event ${i} has seq ${e.seq}: the log has a gap or a duplicate`);
  });

  // Every turn and every step that started has ended, exactly once.
  const count = (pred: (e: SessionEvent) => boolean) => events.filter(pred).length;
  const turns = [...new Set(events.flatMap((e) => (e.type === 'turn/start' ? [e.turn] : [])))];
  if (turns.length !== evidence.sends.length) say(`${turns.length} turns in the log for ${evidence.sends.length} messages`);
  for (const turn of turns) {
    const ends = events.filter((e) => e.type === 'turn/end' && e.turn === turn);
    if (ends.length !== 1) say(`turn ${turn} has ${ends.length} turn/end events`);
    const outcome = evidence.sends.find((s) => s.outcome?.turn === turn)?.outcome;
    const end = ends[0];
    if (outcome && end?.type === 'turn/end' && end.status !== outcome.status) say(`turn ${turn} ended ${end.status} in the log but ${outcome.status} for its caller`);
    const steps = [...new Set(events.flatMap((e) => (e.type === 'step/start' && e.turn === turn ? [e.step] : [])))];
    for (const step of steps) {
      const stepEnds = count((e) => e.type === 'step/end' && e.turn === turn && e.step === step);
      if (stepEnds !== 1) say(`turn ${turn} step ${step} has ${stepEnds} step/end events`);
      const assistants = events.filter((e) => e.type === 'assistant' && e.turn === turn && e.step === step);
      if (assistants.length > 1) say(`turn ${turn} step ${step} has ${assistants.length} assistant messages`);
      const asked = assistants.flatMap((e) => (e.type === 'assistant' ? e.message.toolCalls.map((c) => c.id) : []));
      const results = events.flatMap((e) => (e.type === 'tool/result' && e.turn === turn && e.step === step ? [e.callId] : []));
      const calls = events.flatMap((e) => (e.type === 'tool/call' && e.turn === turn && e.step === step ? [e.callId] : []));
      // Every call the assistant asked for is answered exactly once; nothing else is.
      for (const id of asked) {
        const n = results.filter((r) => r === id).length;
        if (n !== 1) say(`turn ${turn} step ${step}: tool call ${id} has ${n} results`);
      }
      for (const id of new Set([...results, ...calls])) if (!asked.includes(id)) say(`turn ${turn} step ${step}: ${id} is not a call the assistant asked for`);
      for (const id of calls) if (calls.filter((c) => c === id).length > 1) say(`turn ${turn} step ${step}: tool call ${id} was dispatched twice`);
    }
  }
  const last = events.at(-1);
  if (last && last.type !== 'turn/end') say(`the log ends with ${last.type}, not with a closed turn`);
  return [...new Set(problems)];
}

/** Side-effecting calls carry an Idempotency-Key; the target must never have seen one twice. */
export function duplicateSideEffects(keys: readonly (string | undefined)[]): string[] {
  const seen = new Map<string, number>();
  for (const key of keys) if (key !== undefined) seen.set(key, (seen.get(key) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([key, n]) => `Idempotency-Key ${key} reached the target ${n} times: a side-effecting call ran twice`);
}
