import { upsertSearchAttributes, workflowInfo, type CancellationScope } from '@temporalio/workflow';
import type { SendMessage, SessionConfig, SessionState as SessionStateView, TurnOutcome } from '../contracts/api';
import { policyInForce, type SessionRetryPolicy } from '../contracts/retry-policy';
import { AgentCostUsd, AgentModel, AgentStatus, AgentStepCount } from '../contracts/search-attributes';
import { atFirstRevision } from '../contracts/session-revision';
import type { SessionEvent } from '../contracts/session-log';
import { NO_USAGE, usageOf } from '../contracts/conversation';
import { jsonBytes } from '../contracts/log-pages';
import type { AssistantMessage, Usage } from '../contracts/messages';
import { addSpend, addUsage, maxSpend, NO_SPEND, sameSpend, spendOf, withCall, type Spend } from '../contracts/spend';
import { CARRIED_OUTPUT_BYTES, type OutputSchema } from '../contracts/structured-output';
import { modelChain, type ModelInForce } from './model-fallback';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { handedOffRefusal, type HandedOffTo } from '../contracts/handoffs';

export type SessionStatus = SessionStateView['status'];
export type SessionPhase = SessionStateView['phase'];

/** Outcomes carried into the next run: a client waiting on a turn waits on a recent one. */
const CARRIED_OUTCOMES = 100;

/** A user message accepted by `send`, waiting for its turn; `outputSchema` is its own, when it gave one. */
export interface QueuedMessage {
  turn: number;
  text: string;
  outputSchema?: OutputSchema;
}

/**
 * What one run of a session knows beside its log: the messages waiting, the turns closed,
 * the turn running, and whether an end was asked for. Its status is read here only, so the
 * `state` query and the search attributes never disagree.
 *
 * Every field is private and changes only through the named transitions below (a message
 * queued or taken, a turn or step started, an end asked for, …): a reader finds every
 * writer of the session's state in this file.
 */
export class SessionState {
  readonly #queue: QueuedMessage[] = [];
  /** Turns closed in an earlier run (or in the session forked from) answer `awaitTurn` too. */
  readonly #outcomes: Map<number, TurnOutcome>;
  #nextTurn: number;
  #turnsRun: number;
  #running: { turn: number; scope: CancellationScope } | undefined;
  #endRequested = false;
  #lastTurnFailed = false;
  /** Where the conversation went, once a call handed it over (workflows/handoff.ts); the session ends after the turn. */
  #handedOff: { to: HandedOffTo; reason?: string } | undefined;
  #phase: SessionPhase = 'idle';
  /** The step running now, or the last one. */
  #step = 0;
  #stepsTaken: number;
  #spend: Spend;
  /** The sub-agents running now, by their call's id: the child's id and the whole spend it last signalled, counted in `spend` until its result is recorded. */
  readonly #children = new Map<string, { workflowId: string; spend: Spend }>();
  #usage: Required<Usage>;
  #spendListener: ((spend: Readonly<Spend>) => void) | undefined;
  #retryPolicy: SessionRetryPolicy | 'default';
  readonly #rememberedFrom: number;
  /** The session's model and its fallbacks, in the order a failing step tries them. */
  readonly #chain: readonly string[];
  #modelInForce: ModelInForce;

  /**
   * A run continued from one that compacted holds only the log's tail, so the session's
   * counts come from what the last run carried, and a fork's from what its source had at
   * the cut; a new session counts them from its events.
   */
  constructor(config: SessionConfig, events: readonly SessionEvent[]) {
    const carried = config.continued;
    this.#outcomes = new Map([
      ...(carried?.outcomes ?? []).map((o) => [o.turn, o] as const),
      ...events.flatMap((e) => (e.type === 'turn/end' ? [[e.turn, outcomeOf(e)] as const] : [])),
    ]);
    // A session handed a conversation answers its message under the turn number it had (contracts/handoffs.ts).
    this.#nextTurn = Math.max(carried?.nextTurn ?? config.handoff?.turn ?? 1, Math.max(0, ...events.map((e) => ('turn' in e ? e.turn : 0))) + 1);
    this.#turnsRun = carried?.turnsRun ?? 0;
    // A fork's counts at its cut, only in its first run: a run it continued into was carried its own.
    const counted = carried ?? config.fork;
    this.#stepsTaken = counted?.stepsTaken ?? events.filter((e) => e.type === 'step/start').length;
    this.#spend = carried?.spend ?? spendOf(events, config.fork?.carriedSpend);
    this.#usage = counted?.usage ? { ...NO_USAGE, ...counted.usage } : usageOf(events);
    this.#rememberedFrom = Math.min(this.#nextTurn, ...this.#outcomes.keys());
    // A carried `null` is the user's "no retries" and must survive continue-as-new, so only
    // an absent `continued` falls back to the input's policy (`??` would read `null` as absent).
    this.#retryPolicy = config.continued
      ? config.continued.retryPolicy
      : config.retryPolicy === undefined
        ? 'default'
        : config.retryPolicy;
    this.#chain = modelChain(config);
    // Only a run continued while a fallback was in force was carried one; a fork, a new
    // session and every other run start on the first model.
    const carriedModel = carried?.modelInForce;
    this.#modelInForce = carriedModel && carriedModel.index < this.#chain.length ? carriedModel : ON_FIRST_MODEL;
  }

  status(): SessionStatus {
    return this.#running ? 'running' : this.#endRequested ? 'ended' : this.#lastTurnFailed ? 'failed' : 'idle';
  }

  /** Where the conversation went, when this session handed it over. */
  get handedOffTo(): Readonly<{ to: HandedOffTo; reason?: string }> | undefined {
    return this.#handedOff;
  }

  /**
   * A call handed the conversation over to `to`: the session ends after this turn, and a
   * message that waits for a later turn is never run here. Its `send` fails cancelled, naming
   * the session that has the conversation, so the caller knows where to send it.
   */
  handedOff(to: HandedOffTo, reason: string | undefined): void {
    this.#handedOff = { to, ...(reason ? { reason } : {}) };
    this.#endRequested = true;
    for (const queued of this.#queue.splice(0)) {
      this.#outcomes.set(queued.turn, { turn: queued.turn, status: 'cancelled', failure: { type: WORKFLOW_ERROR_TYPES.cancelled, message: handedOffRefusal(to) } });
    }
  }

  /** A message is queued or an end was asked for: the session has something to do. */
  hasWork(): boolean {
    return this.#queue.length > 0 || this.#endRequested;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** The turn number the next message accepted gets. */
  get nextTurn(): number {
    return this.#nextTurn;
  }

  get turnsRun(): number {
    return this.#turnsRun;
  }

  /** The turn running now, if one is. */
  get runningTurn(): number | undefined {
    return this.#running?.turn;
  }

  get endRequested(): boolean {
    return this.#endRequested;
  }

  get phase(): SessionPhase {
    return this.#phase;
  }

  get step(): number {
    return this.#step;
  }

  get stepsTaken(): number {
    return this.#stepsTaken;
  }

  /** What the session spent: its own LLM calls, its sub-agents' recorded results, and what its running sub-agents have signalled so far. */
  get spend(): Readonly<Spend> {
    let spend = this.#spend;
    for (const live of this.#children.values()) spend = addSpend(spend, live.spend);
    return spend;
  }

  get usage(): Readonly<Required<Usage>> {
    return this.#usage;
  }

  get retryPolicy(): SessionRetryPolicy | 'default' {
    return this.#retryPolicy;
  }

  livePolicy(): SessionRetryPolicy {
    return policyInForce(this.#retryPolicy);
  }

  /** The model the session's calls go to now: its first, or the fallback a failing step switched to. */
  get model(): string {
    return this.#chain[this.#modelInForce.index] as string;
  }

  get modelInForce(): Readonly<ModelInForce> {
    return this.#modelInForce;
  }

  /** The model a failing call goes to after the one in force; undefined on the chain's last. */
  nextModel(): string | undefined {
    return this.#chain[this.#modelInForce.index + 1];
  }

  /** The outcome of a closed turn this run knows, else undefined. */
  outcome(turn: number): TurnOutcome | undefined {
    return this.#outcomes.get(turn);
  }

  /**
   * An ended turn whose outcome this run was not carried (older than the latest ones the
   * last run kept): `awaitTurn` cannot answer for it. Every later turn it can.
   */
  forgot(turn: number): boolean {
    return turn < this.#rememberedFrom && !this.#outcomes.has(turn);
  }

  /**
   * The outcomes `awaitTurn` may still be asked for in the next run: the latest ones. Each
   * keeps its structured value only when that is small: a hundred outcomes ride in every
   * continue-as-new input, which compaction cannot shrink, and the log keeps every value.
   */
  outcomesToCarry(): TurnOutcome[] {
    return [...this.#outcomes.values()]
      .sort((a, b) => a.turn - b.turn)
      .slice(-CARRIED_OUTCOMES)
      .map(({ output, ...outcome }) => (output === undefined || jsonBytes(output) > CARRIED_OUTPUT_BYTES ? outcome : { ...outcome, output }));
  }

  /** `send` accepted a message: it waits for its turn, whose number it is given now. */
  enqueue({ text, outputSchema }: SendMessage): number {
    const turn = this.#nextTurn++;
    this.#queue.push({ turn, text, ...(outputSchema ? { outputSchema } : {}) });
    return turn;
  }

  /** The session runs the oldest waiting message now; undefined when none waits. */
  takeNextMessage(): QueuedMessage | undefined {
    return this.#queue.shift();
  }

  /** `end` was asked for (or the idle clock ran out): no message is accepted from now on. */
  requestEnd(): void {
    this.#endRequested = true;
  }

  /** `setRetryPolicy`: the LLM calls retry by this policy from now on, a pending one too (llm-call-schedules.ts). */
  setRetryPolicy(policy: SessionRetryPolicy | 'default'): void {
    this.#retryPolicy = policy;
  }

  turnStarted(turn: number, scope: CancellationScope): void {
    this.#running = { turn, scope };
  }

  /** `cancelTurn`: cancels the turn running now, and names it; undefined when none runs. */
  cancelRunningTurn(): number | undefined {
    this.#running?.scope.cancel();
    return this.#running?.turn;
  }

  /** A step began: counted, and shown by the `state` Query; visibility hears of it when the turn ends. */
  stepStarted(step: number): void {
    this.#stepsTaken++;
    this.#step = step;
  }

  /** What the running step waits for now, shown by the `state` Query. */
  enteredPhase(phase: Exclude<SessionPhase, 'idle'>, step: number): void {
    this.#phase = phase;
    this.#step = step;
  }

  /** A step's call failed on a failure a fallback takes (model-fallback.ts): the next model of the chain is in force from `at`. */
  switchedModel(at: number): void {
    if (this.nextModel() === undefined) throw new Error('the session has no model after the one in force');
    this.#modelInForce = { index: this.#modelInForce.index + 1, since: at };
  }

  /** Back on the first model: a new turn, or `fallbackReturnAfterMs` after the switch. */
  returnedToFirstModel(): void {
    this.#modelInForce = ON_FIRST_MODEL;
  }

  /** An LLM call was recorded (a step's answer or a compaction): the session spent it. */
  callMade(call: Pick<AssistantMessage, 'usage' | 'costUsd'>): void {
    this.#spend = withCall(this.#spend, call);
    this.#usage = addUsage(this.#usage, call.usage);
    this.#spendChanged();
  }

  /** A sub-agent's call started its child session `workflowId`: what that child signals for `callId` counts from now on. */
  childStarted(callId: string, workflowId: string): void {
    this.#children.set(callId, { workflowId, spend: NO_SPEND });
  }

  /** `subAgentSpend`: a running child's whole spend so far; a call that is not running, or a signal from another workflow, is ignored (a late or stray signal). */
  childSpent(callId: string, workflowId: string, spend: Spend): void {
    const live = this.#children.get(callId);
    if (live?.workflowId !== workflowId) return;
    // Signals may arrive out of order; spend only grows, so an older, lower figure never lowers the count.
    const grown = maxSpend(live.spend, spend);
    if (sameSpend(grown, live.spend)) return;
    this.#children.set(callId, { workflowId, spend: grown });
    this.#spendChanged();
  }

  /** The whole spend a running child last signalled for `callId`: what compensation records for its call (the child did spend it). */
  childSpend(callId: string): Spend | undefined {
    return this.#children.get(callId)?.spend;
  }

  /** `listener` is told the session's whole spend each time it grows (an LLM call, a child's signal or result): a sub-agent's session tells its parent. */
  onSpendChanged(listener: (spend: Readonly<Spend>) => void): void {
    this.#spendListener = listener;
  }

  #spendChanged(): void {
    this.#spendListener?.(this.spend);
  }

  /**
   * A tool call's result was recorded. A sub-agent's carries the child's final spend, which
   * takes the live figure's place; one without (the child never answered: its step was
   * cancelled or failed) keeps the last figure signalled, as the child did spend it.
   */
  toolAnswered(callId: string, spend: Spend | undefined): void {
    const live = this.#children.get(callId);
    this.#children.delete(callId);
    const counted = spend ?? live?.spend;
    if (!counted) return;
    this.#spend = addSpend(this.#spend, counted);
    // The final figure may exceed the last one signalled; the live figure's removal alone changes nothing.
    if (!live || !sameSpend(live.spend, counted)) this.#spendChanged();
  }

  turnEnded(outcome: TurnOutcome): void {
    this.#running = undefined;
    this.#phase = 'idle';
    this.#turnsRun++;
    this.#lastTurnFailed = outcome.status !== 'completed';
    this.#outcomes.set(outcome.turn, outcome);
  }
}

const ON_FIRST_MODEL: ModelInForce = { index: 0, since: 0 };

/**
 * Upserts the session's status and step count, and its cost once a priced call has cost
 * something. From revision 2 (contracts/session-revision.ts) the model goes in the same
 * upsert, and nothing is upserted when every value is already the one the run has (from its
 * start request, which the client fills, or an earlier upsert): each upsert is a billable action.
 */
export function publishStatus(state: SessionState, config: Pick<SessionConfig, 'model' | 'revision'>): void {
  const pairs = [
    { key: AgentStatus, value: state.status() },
    { key: AgentStepCount, value: state.stepsTaken },
    // Only once a priced call has cost something: sessions without one upsert what they always did.
    ...(state.spend.costUsd ? [{ key: AgentCostUsd, value: state.spend.costUsd }] : []),
  ];
  if (atFirstRevision(config)) {
    upsertSearchAttributes(pairs);
    return;
  }
  const changes = [{ key: AgentModel, value: config.model }, ...pairs];
  const known = workflowInfo().typedSearchAttributes;
  if (changes.some(({ key, value }) => known.get(key) !== value)) upsertSearchAttributes(changes);
}

function outcomeOf(e: Extract<SessionEvent, { type: 'turn/end' }>): TurnOutcome {
  return {
    turn: e.turn,
    status: e.status === 'interrupted' ? 'failed' : e.status,
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.failure ? { failure: e.failure } : {}),
    ...(e.output === undefined ? {} : { output: e.output }),
  };
}
