import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { contextQuery } from '../contracts/api';
import {
  MAX_CARRIED_LOG_BYTES,
  cutPoint,
  estimateAfterCompaction,
  estimateRequestTokens,
  implausibleUsage,
  leavesNoRoomForAnswer,
  passesThreshold,
  requestSizeTokens,
  type EstimateOptions,
} from './compaction';
import type { NonRetryableLlmErrorType } from '../contracts/errors';
import { isCancellation, summarizeFailure } from './failure';
import { parseModelRef } from '../contracts/model-ref';
import { sessionContextWindow } from '../contracts/model-windows';
import type { LlmCallRequest, Session } from './session-run';

/** A next run's input above this has its log compacted before it is carried, if a turn can be cut. */
export const CARRY_COMPACT_BYTES = 1024 * 1024;

/** What a compaction reads and writes of its session: the request's frame is the session's LLM settings. */
type CompactingSession = Pick<Session, 'config' | 'log' | 'state' | 'settings' | 'budget' | 'append' | 'callLlm' | 'llmCalls'>;

/**
 * Runs a session's compactions: the decisions are compaction.ts's, the call is an LLM
 * call like a step's (same activity, same retry ladder), and its outcome one event.
 * Nothing is recorded until the call has answered, so a crash during it leaves nothing
 * half-written: the call is retried, and the log gets one `context/compacted`.
 */
export class ContextCompactor {
  readonly #session: CompactingSession;
  readonly #window: number | null;
  readonly #clearToolResultsAfter: Pick<EstimateOptions, 'clearToolResultsAfter'>;
  /** The cut of the last compaction before continue-as-new that failed. */
  #failedCarryCut: number | undefined;

  constructor(session: CompactingSession) {
    this.#session = session;
    // The smallest window of the model and its fallbacks: whichever answers, the request fits.
    this.#window = sessionContextWindow(session.config);
    const { clearToolResultsAfter } = session.config;
    this.#clearToolResultsAfter = clearToolResultsAfter === undefined ? {} : { clearToolResultsAfter };
    // Worked out when asked, not at every step: only a client following the session reads it.
    setHandler(contextQuery, () => {
      const wrong = this.#window === null ? undefined : implausibleUsage(session.log.events, session.settings, this.#options());
      return wrong ? { implausibleUsage: wrong } : {};
    });
  }

  /** Before a step's LLM call: compacts first when the request would pass `compactAt` of the window, or leave the answer too little of it. */
  beforeStep(turn: number, step: number): Promise<void> | undefined {
    const estimate = this.#dueEstimate(turn);
    return estimate === undefined ? undefined : this.#compactBeforeStep(turn, step, estimate);
  }

  async #compactBeforeStep(turn: number, step: number, estimate: number): Promise<void> {
    if (await this.#compact(turn, step, estimate)) await this.#admitAfterCompaction(turn, step);
  }

  /** The request's estimate when it would pass `compactAt` of the window or leave the answer too little of it; undefined when no compaction is due. */
  #dueEstimate(turn: number): number | undefined {
    const estimate = this.#estimate(turn);
    const { compactAt, maxTokens } = this.#session.config;
    const due = passesThreshold(estimate, this.#window, compactAt) || leavesNoRoomForAnswer(estimate, this.#window, maxTokens);
    return due ? estimate : undefined;
  }

  /** After the provider refused a step's request as too long: compacts whatever the estimate. False when nothing can be cut. */
  async afterOverflow(turn: number, step: number): Promise<boolean> {
    const compacted = await this.#compact(turn, step, this.#estimate(turn));
    if (compacted) await this.#admitAfterCompaction(turn, step);
    return compacted;
  }

  /**
   * Before continuing as new, with the next run's input of `carriedBytes`: whether to compact
   * first. Yes when the input is too large and a turn can be cut that no compaction failed at.
   * Judged on all the next run would be given (the tail, the system prompt, the outcomes, the
   * tool list), as continue-as-new judges whether it can be carried at all.
   */
  dueBeforeContinuing(carriedBytes: number): boolean {
    if (carriedBytes <= CARRY_COMPACT_BYTES) return false;
    // The same cut is not asked for twice: a session that decides its next move again after
    // a failed compaction carries its tail as it is, or goes on.
    const cut = cutPoint(this.#session.log.events);
    if (cut === undefined || cut === this.#failedCarryCut) return false;
    // With a hard limit reached the session spends nothing more: the tail goes as it is (the
    // next turn's admission refuses its first call, unless the budget is raised), as long as
    // it can go at all; one compaction past the limit is better than a session ended.
    return this.#session.budget.allows() || carriedBytes > MAX_CARRIED_LOG_BYTES;
  }

  /**
   * The compaction before continuing as new. One that fails (its activity shows why) is no
   * reason to end the session: its cut is not tried again, and the tail is carried as it is,
   * if it fits.
   */
  async beforeContinuing(turn: number, step: number): Promise<void> {
    const cut = cutPoint(this.#session.log.events);
    await this.#compact(turn, step, this.#estimate(turn + 1)).catch((error: unknown) => {
      if (isCancellation(error)) throw error;
      this.#failedCarryCut = cut;
      return false;
    });
  }

  /**
   * The step's own admission came before its compaction; the compaction spent too, so the
   * step's call goes only while the budget still allows it.
   */
  async #admitAfterCompaction(turn: number, step: number): Promise<void> {
    if (!this.#session.budget.allows()) await this.#session.budget.admit(turn, step);
  }

  /**
   * The provider's count where it is plausible, the request's own size where that is
   * larger: a server that reports too few input tokens (none, or a constant) would otherwise
   * keep the session from ever compacting. Counting the size costs a pass over the
   * conversation, so a session without a window, which decides nothing by the estimate, skips it.
   */
  #estimate(turn: number): number {
    const { events } = this.#session.log;
    const options = { ...this.#options(), currentTurn: turn };
    const reported = estimateRequestTokens(events, this.#session.settings, options);
    if (this.#window === null) return reported;
    const size = requestSizeTokens(events, this.#session.settings, options);
    return Math.max(size, reported);
  }

  /** The request is estimated as the model in force would be sent it: its provider's continuation data in, others' out. */
  #options(): EstimateOptions {
    return { provider: parseModelRef(this.#session.state.model).provider, ...this.#clearToolResultsAfter };
  }

  async #compact(turn: number, step: number, tokensBefore: number): Promise<boolean> {
    const { log, settings: frame } = this.#session;
    const throughSeq = cutPoint(log.events);
    if (throughSeq === undefined) return false;
    // The MCP tools offered are those of the whole run so far, whose copy of a tool list the
    // last run's tail left out comes after that tail.
    const call: LlmCallRequest = { turn, step, purpose: 'compact', uptoSeq: throughSeq + 1, toolsUptoSeq: log.nextSeq, logDigest: log.digest };
    const summaryLine = `turn ${turn} · compact · ~${tokensBefore} tokens`;
    // The call's id names its cut, so a replay that would compact at another cut (a code
    // table changed the decision) fails loudly on the id instead of going on with another log.
    const id = `compact-${throughSeq}`;
    const answer = await this.#session.callLlm(summaryLine, call, id).catch((error: unknown) => {
      // A policy change cancelled the call: it goes on, scheduled again (llm-call-schedules.ts).
      if (this.#session.llmCalls.cancelledForPolicy(error)) return this.#session.llmCalls.answer(this.#session.llmCalls.again(error));
      // The conversation up to the cut is itself too long (a huge tool result in the last
      // ended turn, say): once more with every large tool result it holds sent as its one
      // line, or every later step would overflow the same way. -1 reaches the cut's own
      // turn too, which is `turn` itself when the session compacts between turns (before
      // continuing as new); the running turn is past the cut either way. The decision
      // follows the recorded failure, so a replay takes the same path.
      if (!isContextOverflow(error)) throw error;
      // Awaited as it is, so its answer comes when it always did: a policy change leaves it on its own policy.
      return this.#session.callLlm(`${summaryLine} · old tool results cleared`, { ...call, clearToolResultsAfter: -1 }, `${id}-cleared`, false);
    });
    const summary = answer.text;
    const tokensAfter = estimateAfterCompaction(log.events, throughSeq, summary, frame, { ...this.#options(), currentTurn: turn });
    this.#session.append({
      type: 'context/compacted',
      turn,
      throughSeq,
      summary,
      tokensBefore,
      tokensAfter,
      usage: answer.usage,
      ...(answer.costUsd === undefined ? {} : { costUsd: answer.costUsd }),
    });
    // The UI's "current details": the activity's summary was written before the call knew
    // what the summary would weigh. A Query answers it, so nothing goes into history.
    setCurrentDetails(`turn ${turn} · compacted through event ${throughSeq} · ${tokensBefore} → ${tokensAfter} tokens`);
    return true;
  }
}

/** The provider refused the request as longer than the model's window. */
export function isContextOverflow(error: unknown): boolean {
  return !isCancellation(error) && summarizeFailure(error).type === CONTEXT_OVERFLOW;
}

const CONTEXT_OVERFLOW: NonRetryableLlmErrorType = 'context_overflow';
