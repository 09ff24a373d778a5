import { CancellationScope, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { SESSION_WORKFLOW, type SessionInput } from '../contracts/api';
import { carriedSpend, countsAtCut, forkTail } from '../contracts/fork-carry';
import { handoffWorkflowId, type Handoff, type HandoffCallInput } from '../contracts/handoffs';
import type { ToolCall } from '../contracts/messages';
import type { SessionEvent } from '../contracts/session-log';
import { tokensOf } from '../contracts/spend';
import { AGENT_DEPTH, callPositionKey, NO_AGENT_LINEAGE_NAME, type SubAgentOffer } from '../contracts/sub-agents';
import type { CallPosition } from '../contracts/tools/idempotency-key';
import { latestMcpToolList } from '../contracts/tools/mcp-tools';
import type { PreparedToolCall } from '../contracts/tools/registry';
import type { ToolOutcome } from '../contracts/tools/tool-outcome';
import { isCancellation, summarizeFailure } from './failure';
import type { Session } from './session-run';
import type { agentSession } from './session';

/**
 * The handoff (`handoffs`, docs/sub-agents.md#handing-the-conversation-over). A call of
 * `handoff__<agent>` starts that agent as a session of its own, a child workflow that outlives
 * this one (parent-close policy ABANDON: it is the conversation from now on), given this
 * session's log up to the turn running, as a fork is, and the user's message of that turn as
 * its first turn. This session does not wait for that turn: once the other has started, the
 * call is answered, the step ends, `session/handed-off` says where the conversation went, the
 * turn ends `handoff`, and the session ends (next-move.ts), refusing any later message.
 */

/** What the handoff reads of its session. */
type HandingSession = Pick<Session, 'config' | 'workflowId' | 'log' | 'state' | 'budget'>;

/**
 * A handoff's call checked, beside its input (SubAgentTools.prepare): a sub-agent's session
 * has no conversation to give; the conversation may not go back to an agent it has been with
 * (the chain, `Handoff.chain`), nor through more handoffs than `maxAgentDepth` (default
 * AGENT_DEPTH.default), so a model cannot pass it round for ever. A handoff makes no chain of calls.
 */
export function prepareHandoff(session: Pick<Session, 'config'>, agent: string, prepared: PreparedToolCall): PreparedToolCall {
  const { config } = session;
  if (config.parent) return { kind: 'invalid', content: `Tool call rejected: a sub-agent's session answers its one task and cannot hand a conversation to "${agent}".` };
  const chain = chainThrough(session);
  if (chain.includes(agent)) {
    return { kind: 'invalid', content: `Tool call rejected: the conversation has already been with "${agent}" (${[...chain, agent].join(' → ')}); a handoff may not send it back to an agent it came through.` };
  }
  const limit = hopLimit(session);
  if (chain.length > limit) {
    return { kind: 'invalid', content: `Tool call rejected: handing the conversation to "${agent}" would be its handoff number ${chain.length}, past this session's limit of ${limit} (maxAgentDepth).` };
  }
  return prepared;
}

/** The session a call hands the conversation to, as its `tool/call` records it; undefined when the spent budget answers the call without one. */
export function handoffTargetOf(session: HandingSession, offer: SubAgentOffer, position: CallPosition): { workflowId: string; agent: string } | undefined {
  if (targetBudget(session, offer) === 'spent') return undefined;
  return { workflowId: targetIdOf(session, offer.agent, position), agent: offer.agent };
}

/** Starts the agent of `offer` with this session's conversation; its result is the call's. */
export async function handOff(session: HandingSession, offer: SubAgentOffer, position: CallPosition, call: ToolCall): Promise<ToolOutcome> {
  const { agent } = offer;
  const { reason } = call.input as HandoffCallInput;
  const budget = targetBudget(session, offer);
  if (budget === 'spent') return { code: 'error', content: `The conversation was not handed to "${agent}": this session's budget is spent, so nothing is left for it.` };
  const { turn } = position;
  const workflowId = targetIdOf(session, agent, position);
  try {
    await startChild<typeof agentSession>(SESSION_WORKFLOW, {
      args: [targetInput(session, offer, turn, reason, budget)],
      workflowId,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `${agent} · handed over from ${session.workflowId} turn ${turn}`,
    });
  } catch (error) {
    if (isCancellation(error) || CancellationScope.current().consideredCancelled) throw error;
    const failure = summarizeFailure(error);
    return { code: 'error', content: `The conversation was not handed to "${agent}": ${failure.type}: ${failure.message}` };
  }
  session.state.handedOff({ workflowId, agent, turn }, reason);
  return { code: 'ok', content: `Handed the conversation to ${agent} (session ${workflowId})` };
}

const targetIdOf = (session: Pick<Session, 'workflowId'>, agent: string, position: CallPosition) =>
  handoffWorkflowId(session.workflowId, agent, { turn: position.turn, step: position.step, key: callPositionKey(session.workflowId, position) });

/** The agents the conversation has been with, this session's last. */
function chainThrough({ config }: Pick<Session, 'config'>): string[] {
  const before = config.handoff ? (config.handoff.chain ?? [config.handoff.fromAgent]) : [];
  return [...before, config.agent?.name ?? NO_AGENT_LINEAGE_NAME];
}

const hopLimit = ({ config }: Pick<Session, 'config'>) => config.maxAgentDepth ?? AGENT_DEPTH.default;

/**
 * The target's budget. It is carried this session's whole spend (as a fork is), so the same
 * limits leave it exactly what this session has left; an agent's own limit bounds what it
 * spends itself, on top of what it is carried; the lower of the two applies. `spent` when a
 * limit has nothing left (an unknown cost leaves nothing of a USD limit).
 */
function targetBudget(session: HandingSession, offer: SubAgentOffer): Pick<SessionInput, 'budgetUsd' | 'budgetTokens'> | 'spent' {
  const { usd, tokens } = session.budget.budget;
  const spend = session.state.spend;
  const own = offer.record.settings;
  const ownUsd = typeof own.budgetUsd === 'number' ? (spend.costUsd ?? 0) + own.budgetUsd : undefined;
  const ownTokens = typeof own.budgetTokens === 'number' ? tokensOf(spend) + own.budgetTokens : undefined;
  const budgetUsd = lower(usd, ownUsd);
  const budgetTokens = lower(tokens, ownTokens);
  if (budgetUsd !== undefined && (spend.costUsd === null || spend.costUsd >= budgetUsd)) return 'spent';
  if (budgetTokens !== undefined && tokensOf(spend) >= budgetTokens) return 'spent';
  return { ...(budgetUsd === undefined ? {} : { budgetUsd }), ...(budgetTokens === undefined ? {} : { budgetTokens }) };
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/**
 * After a step: when one of its calls handed the conversation over, `session/handed-off`
 * records where it went (before the turn's end), and the turn ends `handoff`.
 */
export function handedOffAfterStep(session: Pick<Session, 'state' | 'append'>, turn: number, step: number): boolean {
  const handed = session.state.handedOffTo;
  if (!handed) return false;
  session.append({ type: 'session/handed-off', turn, step, to: { ...handed.to }, ...(handed.reason ? { reason: handed.reason } : {}) });
  return true;
}

/**
 * The session the conversation goes to: the agent as recorded, the log through the last
 * turn's end before this one (what a fork cut there is given, with the carried spend and
 * counts), and the message of this turn, which it runs first under this turn's number. It
 * keeps this session's limits: the budget left, its approvals unless the agent names its
 * own (as a sub-agent's child does), its `maxAgentDepth` (the agent's own when lower), and
 * the chain of agents the conversation has been with.
 */
function targetInput(session: HandingSession, offer: SubAgentOffer, turn: number, reason: string | undefined, budget: Pick<SessionInput, 'budgetUsd' | 'budgetTokens'>): SessionInput {
  const { config, workflowId, log, state } = session;
  const events = log.events;
  const start = events.find((e): e is Extract<SessionEvent, { type: 'turn/start' }> => e.type === 'turn/start' && e.turn === turn);
  if (!start) throw new Error(`turn ${turn} has no turn/start in this run's log`);
  const cutSeq = lastTurnEndBefore(events, start.seq);
  const kept = cutSeq === undefined ? [] : forkTail(events, cutSeq);
  const after = cutSeq === undefined ? events : events.filter((e) => e.seq > cutSeq);
  // The message's own schema goes along; the session's own is this agent's, not the other's.
  const ownSchema = start.output && JSON.stringify(start.output.schema) !== JSON.stringify(config.outputSchema) ? start.output.schema : undefined;
  const handoff: Handoff = {
    fromWorkflowId: workflowId,
    fromAgent: config.agent?.name ?? NO_AGENT_LINEAGE_NAME,
    chain: chainThrough(session),
    ...(reason ? { reason } : {}),
    turn,
    text: start.text,
    ...(ownSchema ? { outputSchema: ownSchema } : {}),
  };
  const source = { stepsTaken: state.stepsTaken, spend: { ...state.spend }, usage: { ...state.usage } };
  const own = offer.record.settings;
  const ownApprovals = own.approvalRequired !== undefined;
  return {
    agent: offer.record,
    fork: { fromWorkflowId: workflowId, ...(cutSeq === undefined ? {} : { atSeq: cutSeq }), events: kept, ...carriedSpend(source, kept), ...countsAtCut(source, after) },
    handoff,
    ...budget,
    ...(ownApprovals || config.approvalRequired.length === 0 ? {} : { approvalRequired: [...config.approvalRequired] }),
    maxAgentDepth: lower(hopLimit(session), typeof own.maxAgentDepth === 'number' ? own.maxAgentDepth : undefined),
  } as SessionInput;
}

/** The seq of the last `turn/end` before `seq`; undefined when the turn is this run's first. */
function lastTurnEndBefore(events: readonly SessionEvent[], seq: number): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e && e.seq < seq && e.type === 'turn/end') return e.seq;
  }
  return undefined;
}

/**
 * A handed-over session's start (its input's `handoff`, first run only): the conversation's
 * message is queued as its first turn at once, so a client's `awaitTurn` finds it, and the
 * tools its source offered are cleared from its log, so it offers its own (listed before its
 * first call, workflows/tools/mcp-session.ts). Then it goes on as any session.
 */
export function takeOverConversation(session: Pick<Session, 'state' | 'log' | 'append'>, handoff: Handoff): void {
  if (latestMcpToolList(session.log.events)) session.append({ type: 'tools/listed', turn: handoff.turn - 1, servers: [], tools: [] });
  session.state.enqueue({ text: handoff.text, ...(handoff.outputSchema ? { outputSchema: handoff.outputSchema } : {}) });
}
