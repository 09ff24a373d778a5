import { COMPACTION_INSTRUCTION } from '../../activities/llm/compaction-request';
import type { Dialect } from './wire/dialect';

/**
 * A compaction request is the conversation followed by one user message, the agent's
 * compaction instruction (activities/llm/compaction-request.ts). The scripted LLM answers
 * it from the model's compaction replies (`scriptCompaction`) or with a default summary,
 * never from the model's step replies, so a test scripts its steps without having to know
 * when the session compacts. The agent forbids tool calls for it, and a scripted call in
 * the answer comes back as text, as a provider would have it (wire/tool-choice.ts).
 */
export function isCompactionRequest(dialect: Dialect, body: Record<string, unknown>): boolean {
  return dialect.finalUserText(body)?.startsWith(COMPACTION_INSTRUCTION) === true;
}

/** The default summary: short, and saying what it stands for, so a test can tell it in a later request. */
export function defaultSummary(dialect: Dialect, body: Record<string, unknown>): string {
  const summarised = Math.max(0, dialect.messageCount(body) - 1);
  return `Summary by the scripted LLM of the ${summarised} messages before the compaction request.`;
}
