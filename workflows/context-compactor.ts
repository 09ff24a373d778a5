import { patched } from '@temporalio/workflow';
import type { SessionConfig } from './api';
import { cutPoint, estimateAfterCompaction, estimateRequestTokens, passesThreshold, tailToCarry, type EstimateOptions, type RequestFrame } from './compaction';
import { isCancellation } from './failure';
import { jsonBytes } from './log-pages';
import type { LlmCallInput } from './llm-call';
import type { AssistantMessage } from './messages';
import { parseModelRef } from './model-ref';
import { sessionContextWindow } from './model-windows';
import type { NewSessionEvent, SessionEvent, SessionLog } from './session-log';

/** Sessions recorded before compaction issue no compaction call, and carry their whole log into the next run. */
export const CONTEXT_COMPACTION_PATCH = 'context-compaction';

/** A tail above this is compacted before it is carried into the next run, if a turn can be cut. */
export const CARRY_COMPACT_BYTES = 1024 * 1024;

export interface CompactorParts {
  config: SessionConfig;
  log: SessionLog;
  frame: RequestFrame;
  append(event: NewSessionEvent): SessionEvent;
  /** Schedules an LLM call on the session's proxy and ladder, with this activity summary. */
  callLlm(summary: string, input: Pick<LlmCallInput, 'turn' | 'step' | 'uptoSeq' | 'logDigest' | 'purpose'>): Promise<AssistantMessage>;
}

/**
 * Runs a session's compactions: the decisions are compaction.ts's, the call is an LLM
 * call like a step's (same activity, same retry ladder), and its outcome one event.
 * Nothing is recorded until the call has answered, so a crash during it leaves nothing
 * half-written: the call is retried, and the log gets one `context/compacted`.
 */
export class ContextCompactor {
  readonly #parts: CompactorParts;
  readonly #window: number | null;
  readonly #options: EstimateOptions;

  constructor(parts: CompactorParts) {
    this.#parts = parts;
    this.#window = sessionContextWindow(parts.config);
    const { clearToolResultsAfter } = parts.config;
    this.#options = { provider: parseModelRef(parts.config.model).provider, ...(clearToolResultsAfter === undefined ? {} : { clearToolResultsAfter }) };
  }

  /** Before a step's LLM call: compacts first when the request would pass `compactAt` of the window. */
  async beforeStep(turn: number, step: number): Promise<void> {
    const estimate = this.#estimate(turn);
    if (!passesThreshold(estimate, this.#window, this.#parts.config.compactAt)) return;
    await this.#compact(turn, step, estimate);
  }

  /** After the provider refused a step's request as too long: compacts whatever the estimate. False when nothing can be cut. */
  afterOverflow(turn: number, step: number): Promise<boolean> {
    return this.#compact(turn, step, this.#estimate(turn));
  }

  /**
   * Before continuing as new: compacts when the tail to carry is too large and a turn can be
   * cut. True when it did. A compaction that failed (its activity shows why) is no reason
   * to end the session: the tail is carried as it is, if it fits.
   */
  async beforeContinuing(turn: number, step: number): Promise<boolean> {
    if (jsonBytes(tailToCarry(this.#parts.log.events)) <= CARRY_COMPACT_BYTES) return false;
    return this.#compact(turn, step, this.#estimate(turn + 1)).catch((error: unknown) => {
      if (isCancellation(error)) throw error;
      return false;
    });
  }

  #estimate(turn: number): number {
    return estimateRequestTokens(this.#parts.log.events, this.#parts.frame, { ...this.#options, currentTurn: turn });
  }

  async #compact(turn: number, step: number, tokensBefore: number): Promise<boolean> {
    const { log, frame } = this.#parts;
    const throughSeq = cutPoint(log.events);
    if (throughSeq === undefined || !patched(CONTEXT_COMPACTION_PATCH)) return false;
    const answer = await this.#parts.callLlm(`turn ${turn} · compact · ~${tokensBefore} tokens`, {
      turn,
      step,
      purpose: 'compact',
      uptoSeq: throughSeq + 1,
      logDigest: log.digestThrough(throughSeq),
    });
    const summary = answer.text;
    const tokensAfter = estimateAfterCompaction(log.events, throughSeq, summary, frame, { ...this.#options, currentTurn: turn });
    this.#parts.append({
      type: 'context/compacted',
      turn,
      throughSeq,
      summary,
      tokensBefore,
      tokensAfter,
      usage: answer.usage,
      ...(answer.costUsd === undefined ? {} : { costUsd: answer.costUsd }),
    });
    return true;
  }
}
