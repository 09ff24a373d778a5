import type { Message, ToolResultMessage, Usage } from './messages';
import type { SessionEvent } from './session-log';

/**
 * The conversation a provider sees, derived from the log. Tool results follow their
 * assistant message in the assistant's call order, whatever order they finished in.
 */
export function conversationOf(events: readonly SessionEvent[]): Message[] {
  const results = new Map<string, ToolResultMessage>();
  for (const e of events) {
    if (e.type === 'tool/result') {
      results.set(callKey(e.turn, e.step, e.callId), { role: 'tool', toolCallId: e.callId, name: e.name, code: e.code, content: e.content });
    }
  }
  const messages: Message[] = [];
  for (const e of events) {
    if (e.type === 'turn/start') messages.push({ role: 'user', text: e.text });
    else if (e.type === 'assistant') {
      const { text, toolCalls } = e.message;
      messages.push({ role: 'assistant', text, toolCalls });
      for (const call of toolCalls) {
        const result = results.get(callKey(e.turn, e.step, call.id));
        if (result) messages.push(result);
      }
    }
  }
  return messages;
}

/** Call ids are the provider's; only within one step are they certain to be unique. */
const callKey = (turn: number, step: number, callId: string) => `${turn}/${step}/${callId}`;

export function usageOf(events: readonly SessionEvent[]): Usage {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const e of events) {
    if (e.type === 'assistant') {
      inputTokens += e.message.usage.inputTokens;
      outputTokens += e.message.usage.outputTokens;
    }
  }
  return { inputTokens, outputTokens };
}
