/**
 * Every failure `type` the agent raises or reports, in one place. The string is the
 * ApplicationFailure type, the entry in an activity's `nonRetryableErrorTypes`, the
 * `failure.type` of a turn or a step in the session's log, what the UI and the client
 * show, and what the tests assert on. Renaming one breaks recorded histories and the
 * clients that read them; adding one means adding it here (a test scans the code for
 * types raised outside this map, and another holds the README's table equal to it).
 *
 * Pure data: the workflow sandbox imports it.
 */

/** Where a failure of the type comes from. */
export type FailureRaiser = 'llm activity' | 'tool activity' | 'mcp activity' | 'child-session activity' | 'session' | 'temporal';

export interface FailureTypeEntry {
  /** Whether Temporal retries it as raised (the meaning names the exceptions). */
  readonly retryable: boolean;
  readonly raisedBy: readonly FailureRaiser[];
  /** One line: what happened. */
  readonly meaning: string;
}

export const FAILURE_TYPES = {
  // The LLM call: a provider error, classified once by the activity.
  timeout: { retryable: true, raisedBy: ['llm activity'], meaning: 'the provider answered 408: the request took too long on its side' },
  rate_limit: { retryable: true, raisedBy: ['llm activity'], meaning: 'the provider answered 429: too many requests or tokens for now' },
  overloaded: { retryable: true, raisedBy: ['llm activity'], meaning: 'the provider answered 529 (or said it is overloaded)' },
  server_error: { retryable: true, raisedBy: ['llm activity'], meaning: 'the provider answered 5xx' },
  network_error: {
    retryable: true,
    raisedBy: ['llm activity'],
    meaning: 'DNS, connect, TLS or socket failure, a truncated or silent stream, or an attempt lost with its worker',
  },
  auth_error: { retryable: false, raisedBy: ['llm activity'], meaning: 'the provider answered 401 or 403: the key is missing, wrong or not allowed' },
  invalid_request: { retryable: false, raisedBy: ['llm activity'], meaning: 'the provider refused the request (another 4xx): sending it again cannot help' },
  context_overflow: { retryable: false, raisedBy: ['llm activity'], meaning: "the conversation is longer than the model's context window" },
  quota_exceeded: { retryable: false, raisedBy: ['llm activity'], meaning: 'a 429 that names a spend or quota limit: waiting does not refill a billing account' },
  content_blocked: {
    retryable: false,
    raisedBy: ['llm activity'],
    meaning: "the provider's safety, recitation or blocklist rules blocked the prompt or stopped the answer",
  },
  unknown: { retryable: false, raisedBy: ['llm activity'], meaning: 'the LLM call failed in a way that is not a classified provider error' },

  // The session's own decisions.
  invalid_input: { retryable: false, raisedBy: ['session'], meaning: "the session's start input failed its schema" },
  cancelled: { retryable: false, raisedBy: ['session'], meaning: 'the turn was cancelled by the user' },
  turn_timeout: { retryable: false, raisedBy: ['session'], meaning: 'the turn ran longer than --turn-timeout: it was stopped and its open calls answered' },
  budget_exceeded: {
    retryable: false,
    raisedBy: ['session'],
    meaning: "the session's budget does not allow the next LLM call, or a human stopped at its soft limit",
  },
  payload_too_large: { retryable: false, raisedBy: ['session'], meaning: 'a payload or history limit of Temporal would be exceeded' },
  interrupted: {
    retryable: false,
    raisedBy: ['session'],
    meaning: 'the session stopped in the middle of a step (terminated, crashed, or cut there by a fork); the step was closed afterwards',
  },
  output_invalid: {
    retryable: false,
    raisedBy: ['session'],
    meaning: "the turn's answer did not match its output schema after every repair request (--output-retries); the message lists the last errors",
  },
  refused: { retryable: false, raisedBy: ['session'], meaning: 'the model refused to give a structured answer (its stop reason was a refusal): not repaired' },
  internal_error: {
    retryable: false,
    raisedBy: ['session', 'llm activity', 'tool activity'],
    meaning: 'a bug or an unexpected state in our own code, or a failure of a type not in this table (its message starts with that type)',
  },

  // Custom tools (`defineTool`), run by the tool activities.
  tool_failed: {
    retryable: true,
    raisedBy: ['tool activity'],
    meaning: "a custom tool's run threw an error other than ToolError (retried in the read-only lane; a side-effecting call has one attempt)",
  },
  unknown_custom_tool: { retryable: false, raisedBy: ['tool activity'], meaning: 'the session names a custom tool the worker does not have' },
  unknown_agent: { retryable: false, raisedBy: ['tool activity'], meaning: 'the session offers a sub-agent (agents) the worker does not define' },

  // A session asked by a workflow of the user's own (runAgentTurn, startChildSession).
  session_refused: {
    retryable: false,
    raisedBy: ['child-session activity'],
    meaning: 'the session refused the message a workflow sent it (empty, too long, or the session has ended), or does not exist',
  },

  // MCP servers, reached by the MCP activities.
  mcp_unavailable: {
    retryable: true,
    raisedBy: ['mcp activity'],
    meaning: 'the MCP server could not be started or reached, or closed the connection (never retried: a missing command, an HTTP 4xx)',
  },
  mcp_timeout: { retryable: true, raisedBy: ['mcp activity'], meaning: 'the MCP server did not answer within its timeoutMs' },
  mcp_unknown_server: { retryable: false, raisedBy: ['mcp activity'], meaning: "the session names an MCP server the worker's AGENT_MCP_CONFIG does not have" },
  mcp_tool_name_clash: { retryable: false, raisedBy: ['mcp activity'], meaning: 'two tools would be offered to the model under one name' },

  // Temporal ended an activity or the workflow; the session reports it under these names.
  start_to_close_timeout: { retryable: true, raisedBy: ['temporal'], meaning: 'an activity attempt ran past its start-to-close timeout' },
  schedule_to_start_timeout: { retryable: false, raisedBy: ['temporal'], meaning: 'no worker picked the activity up within its schedule-to-start timeout' },
  schedule_to_close_timeout: { retryable: false, raisedBy: ['temporal'], meaning: 'the activity, retries included, ran past its schedule-to-close timeout' },
  heartbeat_timeout: { retryable: true, raisedBy: ['temporal'], meaning: 'an activity went silent past its heartbeat timeout (its worker is gone or stuck)' },
  terminated: { retryable: false, raisedBy: ['temporal'], meaning: 'the execution was terminated' },
} as const satisfies Record<string, FailureTypeEntry>;

export type FailureType = keyof typeof FAILURE_TYPES;

export function isFailureType(type: string): type is FailureType {
  return Object.hasOwn(FAILURE_TYPES, type);
}
