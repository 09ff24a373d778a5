/**
 * `durable-agent-worker`, the package's main entry (docs/package.md): what a program that
 * talks to a session shares with it. The session's input and its Updates and Queries, as
 * the workflow validates them, so a caller can refuse bad input before anything reaches
 * history; the log's events, which a client reads back; the failure types a turn ends
 * with; and the tool contract's types. Every name here is a promise to the package's
 * users: the entries of `exports` in package.json each have one such file (this one,
 * `client/index.ts`, `workflows/index.ts`, `worker/index.ts`).
 */
export type { AnyToolDefinition, ToolClass, ToolDefinition, ToolTimeouts } from './contracts/tools/tool-definition';
export type { ToolOutcome } from './contracts/tools/tool-outcome';
export {
  ApprovalDecisionSchema,
  AwaitTurnSchema,
  awaitTurnUpdate,
  cancelTurnUpdate,
  contextQuery,
  decideApprovalUpdate,
  describeIssues,
  endUpdate,
  logQuery,
  refreshToolsUpdate,
  RetryPolicyUpdateSchema,
  SendMessageSchema,
  sendUpdate,
  SESSION_WORKFLOW,
  SessionInputSchema,
  setBudgetUpdate,
  setRetryPolicyUpdate,
  stateQuery,
  TurnOutcomeSchema,
  TurnStatusSchema,
  type ApprovalDecision,
  type AwaitTurn,
  type ImplausibleUsage,
  type PendingApproval,
  type RetryPolicyUpdate,
  type SendMessage,
  type SessionConfig,
  type SessionInput,
  type SessionResult,
  type SessionState,
  type TurnOutcome,
  type TurnStatus,
} from './contracts/api';
export { SessionEventSchema, type FailureSummary, type SessionEvent } from './contracts/session-log';
export type { AssistantMessage, ToolCall, ToolResultCode, Usage } from './contracts/messages';
export type { Budget, BudgetUpdate } from './contracts/budget';
export type { Spend } from './contracts/spend';
export type { RetryPolicy, SessionRetryPolicy } from './contracts/retry-policy';
export type { SessionSettings } from './contracts/session-settings';
export { FAILURE_TYPES, isFailureType, type FailureType } from './contracts/failure-types';
// Tools of one's own, with the built-in tools' guarantees (docs/tools.md#your-own-tools).
export { defineTool, ToolDefinitionError, ToolError, type CustomTool, type CustomToolOptions, type ToolContext } from './contracts/tools/custom-tool';
export { defineAgent, AgentDefinitionError, type AgentConfig, type AgentDefinition, type AgentSettings } from './contracts/agents/agent-definition';
export type { AgentRecord } from './contracts/agents/agent-record';
export type { AgentCatalogue, AgentCatalogueEntry, AgentTool } from './contracts/agents/agent-catalogue';
// Agents that call agents (docs/sub-agents.md): the tool's name, the child's id and input, its answer, the spend it signals.
export {
  AGENT_DEPTH,
  AGENT_TOOL_PREFIX,
  agentOfToolName,
  agentToolName,
  SubAgentCallInputSchema,
  SubAgentParentSchema,
  subAgentSpendSignal,
  subAgentWorkflowId,
  type SubAgentAnswer,
  type SubAgentCallInput,
  type SubAgentParent,
  type SubAgentSpend,
} from './contracts/sub-agents';
