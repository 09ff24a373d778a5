import type { AssistantMessage } from '../../contracts/messages';
import { SessionLog, type NewSessionEvent } from '../../contracts/session-log';

/**
 * Logs built by hand for the pure tests of compaction and of what a provider is sent:
 * turns of one `read_file` call and an answer, with the usage a provider would report.
 */

type Usage = AssistantMessage['usage'];

export const calling = (id: string, usage: Usage = { inputTokens: 10, outputTokens: 2 }): AssistantMessage => ({
  role: 'assistant',
  text: '',
  toolCalls: [{ id, name: 'read_file', input: { path: `${id}.txt` } }],
  stopReason: 'tool_use',
  usage,
});

export const answering = (text: string, usage: Usage = { inputTokens: 20, outputTokens: 3 }): AssistantMessage => ({ role: 'assistant', text, toolCalls: [], stopReason: 'end_turn', usage });

/** One turn: a tool call whose result is `content`, then an answer. */
export function turnEvents(turn: number, content = `content ${turn}`): NewSessionEvent[] {
  const id = `call_${turn}`;
  return [
    { type: 'turn/start', turn, text: `question ${turn}` },
    { type: 'step/start', turn, step: 1, model: 'anthropic:m' },
    { type: 'assistant', turn, step: 1, message: calling(id) },
    { type: 'tool/call', turn, step: 1, callId: id, name: 'read_file', input: { path: `${id}.txt` } },
    { type: 'tool/result', turn, step: 1, callId: id, name: 'read_file', code: 'ok', content },
    { type: 'step/end', turn, step: 1, status: 'completed' },
    { type: 'step/start', turn, step: 2, model: 'anthropic:m' },
    { type: 'assistant', turn, step: 2, message: answering(`answer ${turn}`) },
    { type: 'step/end', turn, step: 2, status: 'completed' },
    { type: 'turn/end', turn, status: 'completed', reason: 'answered' },
  ];
}

export function logOf(events: NewSessionEvent[]): SessionLog {
  const log = new SessionLog();
  events.forEach((e) => log.append(e, 0));
  return log;
}
