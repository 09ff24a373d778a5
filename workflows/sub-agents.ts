import { startAttributePairs } from '../contracts/search-attributes';
import { atFirstRevision } from '../contracts/session-revision';
import { CancellationScope, CancelledFailure, ChildWorkflowCancellationType, ChildWorkflowFailure, ParentClosePolicy, startChild, type ChildWorkflowHandle } from '@temporalio/workflow';
import { SESSION_WORKFLOW, type SessionInput, type SessionResult } from '../contracts/api';
import type { AgentRecord } from '../contracts/agents/agent-record';
import type { Budget } from '../contracts/budget';
import type { ToolCall } from '../contracts/messages';
import type { FailureSummary } from '../contracts/session-log';
import { tokensOf, type Spend } from '../contracts/spend';
import {
  AGENT_DEPTH,
  latestSubAgentOffer,
  NO_AGENT_LINEAGE_NAME,
  SubAgentCallInputSchema,
  subAgentWorkflowId,
  type SubAgentCallInput,
  type SubAgentOffer,
  type SubAgentParent,
} from '../contracts/sub-agents';
import { positionIdempotencyKey, type CallPosition } from '../contracts/tools/idempotency-key';
import { prepareToolCall, type PreparedToolCall } from '../contracts/tools/registry';
import type { AnyToolDefinition } from '../contracts/tools/tool-definition';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { isCancellation, summarizeFailure } from './failure';
import { handOff, handoffTargetOf, prepareHandoff } from './handoff';
import { HandoffCallInputSchema } from '../contracts/handoffs';
import type { Session } from './session-run';
import { RecordedOffer } from './tools/recorded-offer';
import type { agentSession } from './session';

/** What the sub-agents read of their session: its settings, id, log, state and budget. */
type SubAgentSession = Pick<Session, 'config' | 'workflowId' | 'log' | 'state' | 'budget'>;

/** A sub-agent call's result: a tool's, with the child's spend and, when its turn failed, its failure (recorded in `tool/result`). */
export type SubAgentOutcome = ToolOutcome & { spend?: Spend; failure?: FailureSummary };

/** Hex digits of the call's position key in the child's id: unique per call, short enough to read in the UI. */
const ID_KEY_DIGITS = 12;

/**
 * A session's sub-agents (`agents`, docs/sub-agents.md): offered as the tools `agent__<name>`,
 * listed once by the worker and recorded in `tools/listed` (its `agents` field) with the MCP
 * and custom tools, then read from the log only. A call runs the agent as a child workflow of
 * this one, in the side-effecting lane (alone, in call order, approvals applying), and its
 * result is the child's answer. No activity stands between the two: the child's id comes
 * from the call's position, so a replay after a worker died attaches to the child it started
 * (Temporal's child-workflow events), and a child that completed meanwhile answers at once.
 */
export class SubAgentTools {
  readonly #session: SubAgentSession;
  readonly #recordedOffer: RecordedOffer<SubAgentOffer, RecordedAgent>;

  /** The session offers agents or handoffs, so its log may record an offer. */
  readonly #offers: boolean;

  constructor(session: SubAgentSession) {
    this.#session = session;
    this.#offers = (session.config.agents ?? []).length > 0 || (session.config.handoffs ?? []).length > 0;
    // A session offered neither agents nor handoffs has no offer in its log: no scan per call.
    this.#recordedOffer = new RecordedOffer(() => (this.#offers ? latestSubAgentOffer(session.log.events) : undefined), recordedAgent);
  }

  definitions(): AnyToolDefinition[] {
    return this.#recordedOffer.definitions();
  }

  owns(name: string): boolean {
    return this.#recordedOffer.owns(name);
  }

  /** The call's input checked; a call of an agent already in this chain (a cycle), or one past the depth limit, is refused at once. */
  prepare(call: ToolCall): PreparedToolCall {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`sub-agent ${call.name} is not among the recorded agents`);
    const prepared = prepareToolCall(call, [entry.definition]);
    if (prepared.kind === 'invalid') return prepared;
    const agent = entry.offer.agent;
    if (entry.offer.kind === 'handoff') return prepareHandoff(this.#session, agent, prepared);
    const { lineage, depth, maxDepth } = this.#chain();
    if (lineage.includes(agent)) {
      return { kind: 'invalid', content: `Tool call rejected: "${agent}" is already in this chain of agents (${[...lineage, agent].join(' → ')}); an agent may not call itself or an agent that called it.` };
    }
    if (depth > maxDepth) {
      return { kind: 'invalid', content: `Tool call rejected: calling "${agent}" would make a chain of agents ${depth} deep, past this session's limit of ${maxDepth} (maxAgentDepth).` };
    }
    return prepared;
  }

  /**
   * The child session a call of `call.name` starts, as its `tool/call` records it; undefined
   * for any other tool, and for a call the spent budget answers without a child. Asked just
   * before the dispatch, in the same activation, so both read the same spend.
   */
  childOf(turn: number, step: number, call: ToolCall): { workflowId: string; agent: string } | undefined {
    const entry = this.#recorded().get(call.name);
    if (!entry) return undefined;
    if (entry.offer.kind === 'handoff') return handoffTargetOf(this.#session, entry.offer, { turn, step, callId: call.id });
    if (this.#budgetCap(entry.offer) === 'spent') return undefined;
    return { workflowId: this.#childWorkflowId(entry.offer.agent, { turn, step, callId: call.id }), agent: entry.offer.agent };
  }

  /**
   * Starts the agent as a child session and waits for its answer. A cancelled step (a
   * cancel, the turn's time limit) cancels the child and waits until it has closed, then
   * fails as any cancelled call does, so compensation answers it TOOL_OUTCOME_UNKNOWN.
   */
  async dispatch(turn: number, step: number, call: ToolCall): Promise<SubAgentOutcome> {
    const entry = this.#recorded().get(call.name);
    if (!entry) throw new Error(`sub-agent ${call.name} vanished between preparation and dispatch`);
    const { agent } = entry.offer;
    if (entry.offer.kind === 'handoff') return handOff(this.#session, entry.offer, { turn, step, callId: call.id }, call);
    const { workflowId, state } = this.#session;
    const cap = this.#budgetCap(entry.offer);
    if (cap === 'spent') return { code: 'error', content: `The agent "${agent}" was not started: this session's budget is spent, so nothing is left for it.` };
    const input = this.#childInput(entry.offer, turn, step, call, cap);
    const childId = this.#childWorkflowId(agent, { turn, step, callId: call.id });
    // Before the start: a child's first signal may come in the activation that reports its start.
    state.childStarted(call.id, childId);
    let child: ChildWorkflowHandle<typeof agentSession>;
    try {
      child = await startChild<typeof agentSession>(SESSION_WORKFLOW, {
        args: [input],
        workflowId: childId,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        staticSummary: `${agent} · for ${workflowId} step ${step} #${call.id}`,
        // From revision 2 the child starts `running` (its task is its turn at once), so it upserts nothing before its turn ends.
        ...(input.revision === undefined ? {} : { typedSearchAttributes: startAttributePairs(input.model ?? '', 'running') }),
      });
    } catch (error) {
      if (CancellationScope.current().consideredCancelled) throw asCancellation(error);
      const failure = summarizeFailure(error);
      return { code: 'error', content: `The agent "${agent}" could not be started: ${failure.type}: ${failure.message}` };
    }
    try {
      return outcomeOf(agent, await child.result());
    } catch (error) {
      // The step was stopped: the child was cancelled with it, and the step fails as cancelled,
      // whatever the child's own end (a failure in the same moment is not the call's outcome).
      if (CancellationScope.current().consideredCancelled) throw asCancellation(error);
      const failure = summarizeFailure(error instanceof ChildWorkflowFailure && error.cause ? error.cause : error);
      return { code: 'error', content: failedText(agent, 'failed', failure), failure };
    }
  }

  /** Where this session stands in its tree of agents, and where a child it starts would. */
  #chain(): { lineage: string[]; depth: number; maxDepth: number } {
    const { config } = this.#session;
    const lineage = [...(config.parent?.lineage ?? []), config.agent?.name ?? NO_AGENT_LINEAGE_NAME];
    const depth = (config.parent?.depth ?? 0) + 1;
    const maxDepth = config.parent?.maxDepth ?? config.maxAgentDepth ?? AGENT_DEPTH.default;
    return { lineage, depth, maxDepth };
  }

  #childWorkflowId(agent: string, position: CallPosition): string {
    return subAgentWorkflowId(this.#session.workflowId, agent, { turn: position.turn, step: position.step, key: this.#positionKey(position) });
  }

  /** The call's position key, the first hex digits of its idempotency key: unique per call, the same on every replay. */
  #positionKey(position: CallPosition): string {
    return positionIdempotencyKey(this.#session.workflowId, position).slice('agent-'.length, 'agent-'.length + ID_KEY_DIGITS);
  }

  /**
   * The child's input: the agent as recorded, the call it answers, a budget no larger than
   * what this session has left, this session's approvals unless the agent names its own,
   * and the tree's depth limit. A setting given here wins over the agent's (withAgentSettings).
   */
  #childInput(offer: SubAgentOffer, turn: number, step: number, call: ToolCall, cap: Pick<SessionInput, 'budgetUsd' | 'budgetTokens'>): SessionInput {
    const { config, workflowId } = this.#session;
    const { lineage, depth, maxDepth } = this.#chain();
    const { task, output_schema: outputSchema } = call.input as SubAgentCallInput;
    const parent: SubAgentParent = { workflowId, turn, step, callId: call.id, lineage, depth, maxDepth, task, ...(outputSchema ? { outputSchema } : {}) };
    const ownApprovals = offer.record.settings.approvalRequired !== undefined;
    return {
      ...runningAgent(offer.record),
      parent,
      ...cap,
      ...(ownApprovals || config.approvalRequired.length === 0 ? {} : { approvalRequired: [...config.approvalRequired] }),
      maxAgentDepth: maxDepth,
      // A child runs the commands of its parent's revision; a parent of the first gives none, as it always did.
      ...(atFirstRevision(config) ? {} : { revision: config.revision }),
    };
  }

  /**
   * The child's budget: the agent's own limits, each lowered to what this session's budget
   * has left now (the calls before this one in its lane have settled), so a child cannot
   * outspend its parent; `spent` when a limit has nothing left.
   */
  #budgetCap(offer: SubAgentOffer): Pick<SessionInput, 'budgetUsd' | 'budgetTokens'> | 'spent' {
    const { budget, state } = this.#session;
    const left = leftOf(budget.budget, state.spend);
    const own = offer.record.settings;
    const usd = lowest(numberOr(own.budgetUsd), left.usd);
    const tokens = lowest(numberOr(own.budgetTokens), left.tokens);
    if ((usd !== undefined && usd <= 0) || (tokens !== undefined && tokens <= 0)) return 'spent';
    return { ...(usd === undefined ? {} : { budgetUsd: usd }), ...(tokens === undefined ? {} : { budgetTokens: tokens }) };
  }

  #recorded(): Map<string, RecordedAgent> {
    return this.#recordedOffer.byName();
  }
}

interface RecordedAgent {
  offer: SubAgentOffer;
  definition: AnyToolDefinition;
}

function recordedAgent(offer: SubAgentOffer): RecordedAgent {
  const definition: AnyToolDefinition = {
    name: offer.name,
    description: offer.description,
    input: offer.kind === 'handoff' ? HandoffCallInputSchema : SubAgentCallInputSchema,
    // A child session may do anything its agent can: it runs once, alone, after any approval.
    // A handoff gives the conversation away: it too runs alone, in call order.
    classify: () => 'side_effecting',
    // Unused: the child's own turn and step limits bound it, not an activity's timeout.
    timeouts: { startToCloseMs: 0 },
  };
  return { offer, definition };
}

/**
 * The input fields that run `record`: the agent, and its model, which the input must name
 * (the agent's other settings apply under the input's at the start, withAgentSettings).
 */
export function runningAgent(record: AgentRecord): Pick<SessionInput, 'agent' | 'model'> {
  const { model } = record.settings;
  if (typeof model !== 'string') throw new Error(`the recorded agent "${record.name}" names no model`);
  return { agent: record, model };
}

/** The child's answer as the tool's result: its text, or its typed output as JSON; a turn that did not complete is an error naming its failure. */
function outcomeOf(agent: string, result: SessionResult): SubAgentOutcome {
  const { answer } = result;
  if (!answer) return { code: 'error', content: `The agent "${agent}" ended without an answer.`, spend: result.spend };
  const { outcome, text, spend } = answer;
  if (outcome.status === 'completed') return { code: 'ok', content: outcome.output === undefined ? text : JSON.stringify(outcome.output), spend };
  const failure = outcome.failure;
  if (!failure) return { code: 'error', content: `The agent "${agent}" ${outcome.status} without a recorded reason.`, spend };
  return { code: 'error', content: failedText(agent, outcome.status, failure), spend, failure };
}

/**
 * The error a call stopped by its step's cancellation fails with: a cancellation always, so
 * compensation answers the call TOOL_OUTCOME_UNKNOWN, even when the child failed (or could
 * not start) in the same moment as the cancel.
 */
export function asCancellation(error: unknown): Error {
  if (isCancellation(error)) return error as Error;
  if (error instanceof ChildWorkflowFailure && isCancellation(error.cause)) return error.cause as Error;
  return new CancelledFailure('the call was cancelled with its step', [], error instanceof Error ? error : undefined);
}

function failedText(agent: string, status: string, failure: FailureSummary): string {
  return `The agent "${agent}" ${status}: ${failure.type}: ${failure.message}`;
}

/** What a budget has left after `spend`, per limit it sets; an unknown cost leaves nothing of a USD limit. */
function leftOf(budget: Budget, spend: Readonly<Spend>): { usd?: number; tokens?: number } {
  return {
    ...(budget.usd === undefined ? {} : { usd: spend.costUsd === null ? 0 : budget.usd - spend.costUsd }),
    ...(budget.tokens === undefined ? {} : { tokens: budget.tokens - tokensOf(spend) }),
  };
}

const numberOr = (value: unknown) => (typeof value === 'number' ? value : undefined);

function lowest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}
