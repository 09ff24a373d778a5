import { ApplicationFailure, allHandlersFinished, condition, upsertSearchAttributes } from '@temporalio/workflow';
import { SessionRunInputSchema, describeIssues, type SessionConfig, type SessionInput, type SessionResult } from '../contracts/api';
import { continueAsNew } from './continue-as-new';
import { WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { logMirror } from './log-sink';
import { nextMove } from './next-move';
import { AgentModel } from '../contracts/search-attributes';
import { withAgentSettings } from '../contracts/agents/agent-record';
import { setSessionHandlers } from './session-handlers';
import { Session } from './session-run';
import { publishStatus } from './session-state';
import { runSubAgentSession } from './sub-agent-child';
import { runTurn } from './turn';
import { takeOverConversation } from './handoff';
import { atFirstRevision } from '../contracts/session-revision';

/**
 * An agent session: an append-only log, user messages in through the `send` Update, turns
 * run one at a time. It ends on `end` or after `idleTimeoutMs` without work, never while a
 * turn runs; a sub-agent's session (input `parent`) when its one turn ends.
 */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const session = new Session(input, parseInput(input));
  if (atFirstRevision(session.config)) {
    upsertSearchAttributes([{ key: AgentModel, value: session.config.model }]);
    publishStatus(session.state, session.config);
    setSessionHandlers(session);
  } else {
    // A message that came with the start is queued by now, and a sub-agent's task is its
    // turn at once: that turn publishes `running`, which a client's start request already
    // says, so nothing is upserted before it.
    setSessionHandlers(session);
    if (!session.state.hasWork() && !session.config.parent) publishStatus(session.state, session.config);
  }
  // A session handed a conversation answers its message first (./handoff.ts); its first run only.
  if (session.config.handoff && !session.config.continued) takeOverConversation(session, session.config.handoff);

  try {
    // A sub-agent's session runs its parent's task as its one turn, then ends.
    if (session.config.parent) return await runSubAgentSession(session, session.config.parent);
    for (;;) {
      const move = await nextMove(session);
      switch (move.kind) {
        case 'run-turn': {
          // nextMove chose this move because a message waits.
          const message = session.state.takeNextMessage();
          if (message) await runTurn(session, message);
          break;
        }
        case 'compact-before-continuing':
          // A long wait: a message, an `end` or an open `send` that came meanwhile would be
          // lost by continuing after it, so the next move is decided again. A compaction
          // that failed is not tried again before a turn has ended since (a new cut), so this
          // never loops on it.
          await session.compactor.beforeContinuing(session.state.nextTurn - 1, session.state.step);
          break;
        case 'continue-as-new':
          return await continueAsNew(move.next);
        case 'end':
          session.state.requestEnd();
          publishStatus(session.state, session.config);
          await condition(allHandlersFinished);
          return session.result(move.endedBy);
      }
    }
  } finally {
    // Ended, failed or continued as new: nothing will read this run's copy of the log.
    logMirror.closed();
  }
}

/** The input with its agent's settings under its own (an input without an agent as it is), checked. */
function parseInput(input: SessionInput): SessionConfig {
  const parsed = SessionRunInputSchema.safeParse(withAgentSettings(input));
  if (!parsed.success) {
    // Non-retryable: a workflow task retried forever on bad input helps nobody.
    throw ApplicationFailure.create({ type: WORKFLOW_ERROR_TYPES.invalidInput, message: `invalid session input: ${describeIssues(parsed.error)}`, nonRetryable: true });
  }
  return parsed.data;
}
