/**
 * The client as a library: everything `npm run client` does, as functions.
 *
 *   import { parseClientEnv, connectClient, startSession, sendAndWait, watchSession } from './client';
 *
 * Errors a person should see as one line are `ConfigError` (a bad argument or setting) and
 * `ServerUnreachableError`; `explainError` turns any other client error into that line.
 */
export { ConfigError } from '../config/config-error';
export { ClientEnvSchema, parseClientEnv, type ClientEnv } from './config';
export { explainError, ServerUnreachableError, type ExplainedError } from './errors';
export {
  connectClient,
  endSession,
  exportHistory,
  forkSession,
  readLog,
  runOnce,
  sendAndWait,
  startSession,
  startSessionWithMessage,
  turnOutcomeOf,
  uiLink,
  type ForkOptions,
  type RunResult,
  type RunSettings,
  type SessionHandle,
  type SessionWithTurn,
  type StartOptions,
  type TurnResult,
} from './sessions';
export { cancelTurn, sendMessage, turnMessages, type CancelResult, type SentMessage } from './turn-control';
export { OutputTypeError, type MessageOptions } from './message-output';
export { decideApproval, pendingApprovals, type ApprovalResult } from './approvals';
export { requestEnd, type EndRequested, type SessionEnd } from './end-session';
export { showSession, type SessionView } from './session-view';
export { listAgents, resolveAgent, UnknownAgentError } from './agents';
export { describeRetryPolicy, parseRetryPolicyArg, setRetryPolicy } from './retry-policy';
export { listSessions, ListStatusSchema, sessionsQuery, type ListOptions, type ListStatus, type SessionSummary } from './list-sessions';
export { describeProgress, followProgress, pendingActivities, readProgress, type ActivityProgress, type Progress } from './progress';
export { watchSession, type WatchEndReason, type WatchItem, type WatchOptions } from './watch';
export { formatConversation, formatEvent } from './output';
export { readForkTail, readLogChain, readSessionLog, temporalSessionRuns, type LogRange, type SessionRun, type SessionRuns } from './log-chain';
export { loadModelWindows } from './models-file';
export { allRunHistories, runHistory, type RunHistory } from './run-histories';
