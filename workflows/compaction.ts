import type { ImplausibleUsage } from '../contracts/api';
import { SUMMARY_PREFIX, conversationOf, lastCompaction, type ConversationOptions } from '../contracts/conversation';
import type { ToolSpec } from '../contracts/messages';
import type { ProviderId } from '../contracts/model-ref';
import type { SessionEvent } from '../contracts/session-log';
import { withMcpToolSpecs } from '../contracts/tools/mcp-tools';

/**
 * When a session compacts, where it cuts, and what it carries into its next run: pure
 * functions of the log, so a replay decides exactly what the first run decided.
 *
 * A compaction replaces, in what the provider is sent, every event up to a cut (`throughSeq`)
 * by a summary the model wrote (conversation.ts). The cut is always the `turn/end` of an
 * ended turn: never between a tool call and its result, never inside the step about to
 * call, never through a turn still running.
 */

/** What a request sends besides the conversation: the system prompt and the built-in tools (MCP tools come from the log). */
export interface RequestFrame {
  system?: string;
  tools: readonly ToolSpec[];
}

export interface EstimateOptions extends ConversationOptions {
  provider?: ProviderId;
}

/** Characters per token: the estimate every provider's tokenizer comes near for English and JSON. */
const CHARS_PER_TOKEN = 4;
export const tokensOfChars = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/**
 * The seq of the last event a new compaction may cover: the newest `turn/end` after the
 * last compaction's cut. Undefined when no turn has ended since: nothing can be cut.
 */
export function cutPoint(events: readonly SessionEvent[]): number | undefined {
  const after = lastCompaction(events)?.throughSeq ?? -1;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent;
    if (e.seq <= after) return undefined;
    if (e.type === 'turn/end') return e.seq;
  }
  return undefined;
}

/**
 * The next request's size in tokens. The provider counted the last call's request
 * exactly, so when that call came after the last compaction its `inputTokens` plus its
 * answer are the base, and only the events since are estimated. Otherwise (the first call
 * of a session, or the first after a compaction, whose request is much smaller than the
 * last one) the whole request is estimated.
 *
 * A provider's count is trusted here; not every server counts (an OpenAI-compatible one
 * may report none, or a constant), so the session takes the larger of this and
 * requestSizeTokens (context-compactor.ts).
 */
export function estimateRequestTokens(events: readonly SessionEvent[], frame: RequestFrame, options: EstimateOptions = {}): number {
  const compactedAt = lastCompaction(events)?.seq ?? -1;
  let newChars = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent;
    if (e.seq <= compactedAt) break;
    if (e.type === 'assistant') {
      const { inputTokens, outputTokens } = e.message.usage;
      return inputTokens + outputTokens + tokensOfChars(newChars);
    }
    newChars += JSON.stringify(e).length;
  }
  return requestSizeTokens(events, frame, options);
}

/**
 * The next request counted from what it holds, whatever any provider reported: the system
 * prompt, every tool spec and the conversation as it would be sent (the summary in front,
 * old results cleared), one token per four characters of their JSON.
 */
export function requestSizeTokens(events: readonly SessionEvent[], frame: RequestFrame, options: EstimateOptions = {}): number {
  return tokensOfChars(frameChars(events, frame) + JSON.stringify(conversationOf(events, options.provider, options)).length);
}

/**
 * The last step's call reported fewer than half the input tokens its request held by
 * size: no tokenizer packs JSON and prose that tightly, so the report is wrong (a server
 * that counts nothing, or a constant) and the estimate stands on the request's size.
 * Undefined when the report is plausible or the run has made no step's call.
 */
export function implausibleUsage(events: readonly SessionEvent[], frame: RequestFrame, options: EstimateOptions = {}): ImplausibleUsage | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent;
    if (e.type !== 'assistant') continue;
    // What the call was sent: the events before its answer, for its own turn.
    const requestTokens = requestSizeTokens(events.slice(0, i), frame, { ...options, currentTurn: e.turn });
    const reportedInputTokens = e.message.usage.inputTokens;
    return reportedInputTokens * 2 < requestTokens ? { seq: e.seq, reportedInputTokens, requestTokens } : undefined;
  }
  return undefined;
}

/** The request after a compaction through `throughSeq` with this summary: the frame, the summary and the tail. */
export function estimateAfterCompaction(events: readonly SessionEvent[], throughSeq: number, summary: string, frame: RequestFrame, options: EstimateOptions = {}): number {
  const tail = events.filter((e) => e.seq > throughSeq && e.type !== 'context/compacted');
  const conversation = JSON.stringify(conversationOf(tail, options.provider, options));
  return tokensOfChars(frameChars(events, frame) + SUMMARY_PREFIX.length + summary.length + conversation.length);
}

/**
 * The system prompt and every tool spec offered. The built-in specs are code, so a release
 * that rewrites a tool's description shifts this estimate a little: a session replayed on
 * such a release could decide differently at a call right on the threshold. Versioned
 * workers (AGENT_DEPLOYMENT_NAME) move a session to new code only between runs, where no
 * decision is replayed; an unversioned deploy takes that small risk.
 */
function frameChars(events: readonly SessionEvent[], frame: RequestFrame): number {
  return (frame.system?.length ?? 0) + JSON.stringify(withMcpToolSpecs(frame.tools, events)).length;
}

/** The threshold test: a window is known and the next request would pass `compactAt` of it. */
export function passesThreshold(estimate: number, window: number | null, compactAt: number): boolean {
  return window !== null && estimate > compactAt * window;
}

/**
 * The request would leave the answer less than `maxTokens` of the window: the provider
 * would refuse it or cut the answer short. Only for a cap below the window; a cap at or
 * above it (the default 32 000 against a small window) could never be honoured, and would
 * make every step compact.
 */
export function leavesNoRoomForAnswer(estimate: number, window: number | null, maxTokens: number): boolean {
  return window !== null && maxTokens < window && estimate + maxTokens > window;
}

/**
 * The log's tail travels to the next run as workflow input, and Temporal refuses a payload
 * above 2 MiB (a refused continue-as-new would fail the workflow task again and again). An
 * input above 1 MiB has its log compacted first (context-compactor.ts), so only a tail that
 * cannot be cut, the events of one turn, is this large at continue-as-new. The session ends then, clearly,
 * rather than growing its history until Temporal terminates it at the history limit; its
 * log stays readable and can be forked from an earlier event.
 */
export const MAX_CARRIED_LOG_BYTES = 1.5 * 1024 * 1024;

/**
 * What the next run needs of the log: the events after the last compaction's cut (the
 * compaction itself among them, so its summary still applies), seqs kept. The events
 * before stay readable in this run.
 */
export function tailToCarry(events: readonly SessionEvent[]): SessionEvent[] {
  const through = lastCompaction(events)?.throughSeq;
  return through === undefined ? [...events] : events.filter((e) => e.seq > through);
}

/**
 * The latest MCP tool list when it falls before the tail: the next run records a copy of
 * it first, so its tools are still offered without listing the servers again.
 */
export function toolListCutOff(events: readonly SessionEvent[], tail: readonly SessionEvent[]): Extract<SessionEvent, { type: 'tools/listed' }> | undefined {
  const firstKept = tail[0]?.seq ?? Number.POSITIVE_INFINITY;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent;
    if (e.type === 'tools/listed') return e.seq < firstKept ? e : undefined;
  }
  return undefined;
}
