import type { Message, ToolResultMessage, Usage } from './messages';
import type { ProviderId } from './model-ref';
import type { SessionEvent } from './session-log';
import { addUsage, callOf } from './spend';

/** What is sent besides the log itself: which old tool results are sent as one line instead. */
export interface ConversationOptions {
  /** Tool results of turns more than this many before `currentTurn`, if large, are cleared. */
  clearToolResultsAfter?: number;
  /** The turn the request is for. */
  currentTurn?: number;
}

/**
 * Put in front of the first user message after a compaction, before the summary: the
 * model must read it as its own notes on what came before, not as something the user said.
 */
export const SUMMARY_PREFIX =
  'The conversation before this message was too long for the context window, so it was replaced by this summary of it:\n\n';

/** The first user message after a compaction: the summary, then what the user wrote. */
export function withSummary(summary: string, text: string): string {
  return `${SUMMARY_PREFIX}${summary}\n\n${text}`;
}

/**
 * What the model is sent after an answer that did not match the turn's output schema
 * (an `output/rejected` event): its errors, and the request to answer again.
 */
export function repairRequest(errors: readonly string[]): string {
  return `Your answer did not match the required JSON Schema:\n${errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with only a JSON value that matches the schema.`;
}

/** Tool results above this many UTF-8 bytes may be cleared (`clearToolResultsAfter`); smaller ones cost less than the line that replaces them would save. */
export const CLEARABLE_RESULT_BYTES = 4096;

/** What the model reads instead of a cleared tool result. */
export function clearedResultLine(name: string, callId: string, bytes: number): string {
  return `[The ${bytes}-byte result of the ${name} call ${callId} was cleared from the conversation to keep it short. Call ${name} again if you need that content.]`;
}

/**
 * The conversation a provider sees, derived from the log. Tool results follow their
 * assistant message in the assistant's call order, whatever order they finished in; an
 * answer rejected by the turn's output schema is followed by the repair request.
 *
 * After a compaction (the last `context/compacted` among `events`) only the events after
 * its `throughSeq` are sent, the summary in front of the first user message. With
 * `clearToolResultsAfter`, large results of old turns are sent as one line
 * (clearedResultLine). Neither changes the log: only what is derived from it.
 *
 * A message's provider data goes only to the provider that produced it: signatures are
 * meaningless (and thinking blocks invalid) anywhere else, so a fork or a step on another
 * provider gets the plain message. Without `provider` (the client's view) none is kept.
 */
export function conversationOf(events: readonly SessionEvent[], provider?: ProviderId, options: ConversationOptions = {}): Message[] {
  const compaction = lastCompaction(events);
  const sent = compaction ? events.filter((e) => e.seq > compaction.throughSeq) : events;
  const clearBefore = options.clearToolResultsAfter === undefined || options.currentTurn === undefined ? 0 : options.currentTurn - options.clearToolResultsAfter;
  const results = new Map<string, ToolResultMessage>();
  for (const e of sent) {
    if (e.type === 'tool/result') {
      results.set(callKey(e.turn, e.step, e.callId), { role: 'tool', toolCallId: e.callId, name: e.name, code: e.code, content: e.turn < clearBefore ? clearedIfLarge(e) : e.content });
    }
  }
  const messages: Message[] = [];
  for (const e of sent) {
    if (e.type === 'turn/start') messages.push({ role: 'user', text: e.text });
    else if (e.type === 'output/rejected') messages.push({ role: 'user', text: repairRequest(e.errors) });
    else if (e.type === 'assistant') {
      const { text, toolCalls, providerData } = e.message;
      messages.push({ role: 'assistant', text, toolCalls, ...(providerData && providerData.provider === provider ? { providerData } : {}) });
      for (const call of toolCalls) {
        const result = results.get(callKey(e.turn, e.step, call.id));
        if (result) messages.push(result);
      }
    }
  }
  return compaction ? withSummaryInFront(messages, compaction.summary) : messages;
}

/** The compaction that decides what is sent: the last one. */
export function lastCompaction(events: readonly SessionEvent[]): Extract<SessionEvent, { type: 'context/compacted' }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'context/compacted') return e;
  }
  return undefined;
}

/** A cut is always at a turn's end, so a user message comes first; should one not, the summary is a message of its own. */
function withSummaryInFront(messages: Message[], summary: string): Message[] {
  const [first, ...rest] = messages;
  if (first?.role === 'user') return [{ ...first, text: withSummary(summary, first.text) }, ...rest];
  return [{ role: 'user', text: `${SUMMARY_PREFIX}${summary}` }, ...messages];
}

const encoder = new TextEncoder();

function clearedIfLarge(e: Extract<SessionEvent, { type: 'tool/result' }>): string {
  // n UTF-16 code units are at most 3n UTF-8 bytes: most results need no encoding to tell.
  if (e.content.length * 3 <= CLEARABLE_RESULT_BYTES) return e.content;
  const bytes = encoder.encode(e.content).length;
  return bytes > CLEARABLE_RESULT_BYTES ? clearedResultLine(e.name, e.callId, bytes) : e.content;
}

/** Call ids are the provider's; only within one step are they certain to be unique. */
const callKey = (turn: number, step: number, callId: string) => `${turn}/${step}/${callId}`;

export const NO_USAGE: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

/** The sum of every LLM call's usage among `events` (a step, a turn, the session), compactions included. */
export function usageOf(events: readonly SessionEvent[]): Required<Usage> {
  let total = NO_USAGE;
  for (const e of events) {
    const u = callOf(e)?.usage;
    if (u) total = addUsage(total, u);
  }
  return total;
}
