import type { Message, ToolResultMessage, Usage } from './messages';
import type { ProviderId } from './model-ref';
import type { SessionEvent } from './session-log';

/**
 * The conversation a provider sees, derived from the log. Tool results follow their
 * assistant message in the assistant's call order, whatever order they finished in.
 *
 * A message's provider data goes only to the provider that produced it: signatures are
 * meaningless (and thinking blocks invalid) anywhere else, so a fork or a step on another
 * provider gets the plain message. Without `provider` (the client's view) none is kept.
 */
export function conversationOf(events: readonly SessionEvent[], provider?: ProviderId): Message[] {
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
      const { text, toolCalls, providerData } = e.message;
      messages.push({ role: 'assistant', text, toolCalls, ...(providerData && providerData.provider === provider ? { providerData } : {}) });
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

/** The sum of every assistant message's usage among `events` (a step, a turn, the session). */
export function usageOf(events: readonly SessionEvent[]): Required<Usage> {
  const total: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  for (const e of events) {
    if (e.type !== 'assistant') continue;
    const u = e.message.usage;
    total.inputTokens += u.inputTokens;
    total.outputTokens += u.outputTokens;
    total.cacheReadTokens += u.cacheReadTokens ?? 0;
    total.cacheWriteTokens += u.cacheWriteTokens ?? 0;
    total.reasoningTokens += u.reasoningTokens ?? 0;
  }
  return total;
}
