import type { AssistantMessage } from '../contracts/messages';
import type { SessionEvent } from '../contracts/session-log';

const call = { id: 'toolu_big', name: 'read_file', input: { path: 'big.txt' } };
const calling: AssistantMessage = { role: 'assistant', text: '', toolCalls: [call], stopReason: 'tool_use', usage: { inputTokens: 10, outputTokens: 2 } };
// The provider counted the big result in the answer's input: the next request's estimate starts from it.
const answering = (text: string, inputTokens: number): AssistantMessage => ({ role: 'assistant', text, toolCalls: [], stopReason: 'end_turn', usage: { inputTokens, outputTokens: 5 } });

/**
 * One ended turn that read a file of `content`, as a fork is given it (a fork's events are
 * its source's log): a session started from it holds a large tool result from the start.
 */
export function turnThatRead(content: string, question = 'read big.txt'): SessionEvent[] {
  const events = [
    { type: 'turn/start', turn: 1, text: question },
    { type: 'step/start', turn: 1, step: 1, model: 'anthropic:m' },
    { type: 'assistant', turn: 1, step: 1, message: calling },
    { type: 'tool/call', turn: 1, step: 1, callId: call.id, name: call.name, input: call.input },
    { type: 'tool/result', turn: 1, step: 1, callId: call.id, name: call.name, code: 'ok', content },
    { type: 'step/end', turn: 1, step: 1, status: 'completed' },
    { type: 'step/start', turn: 1, step: 2, model: 'anthropic:m' },
    { type: 'assistant', turn: 1, step: 2, message: answering('I read it.', Math.ceil(content.length / 4)) },
    { type: 'step/end', turn: 1, step: 2, status: 'completed' },
    { type: 'turn/end', turn: 1, status: 'completed', reason: 'answered' },
  ];
  return events.map((e, seq) => ({ ...e, seq, at: 0 }) as SessionEvent);
}
