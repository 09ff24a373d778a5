import type { FailureType } from './failure-types';

/**
 * Named groups of the failure types in `FAILURE_TYPES` (./failure-types.ts), for the
 * code that raises them or lists them in a retry policy. Every value here must be a key
 * of that catalogue: the compiler checks it, and a test checks the groups agree with it.
 */

/** LLM-call failures that waiting can cure: Temporal retries them on the ladder. */
export const RETRYABLE_LLM_ERROR_TYPES = ['timeout', 'rate_limit', 'overloaded', 'server_error', 'network_error'] as const satisfies readonly FailureType[];

/** LLM-call failures that no retry can cure. */
export const NON_RETRYABLE_LLM_ERROR_TYPES = [
  'auth_error',
  'invalid_request',
  'context_overflow',
  'unknown',
  /** A 429 that names a spend or quota limit: waiting 240 s does not refill a billing account. */
  'quota_exceeded',
  /**
   * The provider blocked the prompt or stopped the answer for its safety, recitation or
   * blocklist rules (Gemini's `promptFeedback.blockReason`, a `SAFETY` finish). The same
   * request would be blocked again.
   */
  'content_blocked',
] as const satisfies readonly FailureType[];

export type RetryableLlmErrorType = (typeof RETRYABLE_LLM_ERROR_TYPES)[number];
export type NonRetryableLlmErrorType = (typeof NON_RETRYABLE_LLM_ERROR_TYPES)[number];
export type LlmErrorType = RetryableLlmErrorType | NonRetryableLlmErrorType;

export function isRetryableLlmErrorType(type: string): type is RetryableLlmErrorType {
  return (RETRYABLE_LLM_ERROR_TYPES as readonly string[]).includes(type);
}

/**
 * LLM-call failures a session with fallbacks takes to its next model (docs/fallback.md):
 * the provider or the way to it is down, which another provider is not. Never `rate_limit`
 * (the fleet limits wait for the account's budget, docs/fleet-limits.md), nor a failure the
 * next model would share: a bad request, a blocked prompt, a spent quota of this account.
 */
export const FALLBACK_LLM_ERROR_TYPES = ['overloaded', 'server_error', 'network_error', 'timeout'] as const satisfies readonly RetryableLlmErrorType[];

export function isFallbackLlmErrorType(type: string): type is (typeof FALLBACK_LLM_ERROR_TYPES)[number] {
  return (FALLBACK_LLM_ERROR_TYPES as readonly string[]).includes(type);
}

/** Details attached to every LLM-call ApplicationFailure, shown in the UI and read by the client. */
export interface LlmFailureDetails {
  provider: string;
  status?: number;
  /** The wait the server asked for, when it stated one. */
  retryAfterMs?: number;
  /** Why Temporal will not retry this failure, when it will not. */
  stopReason?: RetryStopReason;
}

/** `fallback`: the session has a next model, and this one has been failing for its `fallbackAfterMs` (docs/fallback.md). */
export type RetryStopReason = 'not_retryable' | 'max_retries' | 'budget_exhausted' | 'retry_after_too_long' | 'retry_off' | 'fallback';

/**
 * The type Temporal's SDK core gives an activity whose result is above the payload limit.
 * No retry can shrink the result, so it is never retried; the workflow reports it as
 * `payload_too_large`.
 */
export const SDK_PAYLOADS_TOO_LARGE = 'PayloadsTooLarge';

/** Failure types raised by the workflow itself. */
export const WORKFLOW_ERROR_TYPES = {
  /** The turn was cancelled by the user: the abort path. */
  cancelled: 'cancelled',
  /** A bug or an unexpected state in our own code. */
  internal: 'internal_error',
  /** A payload or history limit of Temporal would be exceeded. */
  tooLarge: 'payload_too_large',
  /** The session's budget (`--budget-usd`, `--budget-tokens`) does not allow the next LLM call, or a human stopped at its soft limit. */
  budgetExceeded: 'budget_exceeded',
  /** The turn ran longer than `--turn-timeout`: it was cancelled and its open calls answered. */
  turnTimeout: 'turn_timeout',
  /** The session's start input failed its schema. */
  invalidInput: 'invalid_input',
  /** A step the session left open when it stopped (terminated, crashed, cut by a fork), closed afterwards. */
  interrupted: 'interrupted',
  /** Temporal terminated the execution. */
  terminated: 'terminated',
} as const satisfies Record<string, FailureType>;

/** The type the session reports for each kind of Temporal timeout. */
export const TIMEOUT_ERROR_TYPES = {
  START_TO_CLOSE: 'start_to_close_timeout',
  SCHEDULE_TO_START: 'schedule_to_start_timeout',
  SCHEDULE_TO_CLOSE: 'schedule_to_close_timeout',
  HEARTBEAT: 'heartbeat_timeout',
} as const satisfies Record<string, FailureType>;

/** Failures of the custom tools' activities (activities/custom-tools/). */
export const TOOL_ERROR_TYPES = {
  /** A custom tool's `run` threw something other than a `ToolError`. */
  failed: 'tool_failed',
  /** The session names a custom tool the worker does not have. */
  unknownCustomTool: 'unknown_custom_tool',
  /** The session offers a sub-agent (`agents`) the worker does not define. */
  unknownAgent: 'unknown_agent',
} as const satisfies Record<string, FailureType>;

/** Failures of MCP activities (activities/mcp/). */
export const MCP_ERROR_TYPES = {
  /** The server could not be started or reached, or closed the connection (exited, crashed, HTTP error). */
  unavailable: 'mcp_unavailable',
  /** The server did not answer within its `timeoutMs`. */
  timeout: 'mcp_timeout',
  /** The session asked for a server the worker's AGENT_MCP_CONFIG does not have. */
  unknownServer: 'mcp_unknown_server',
  /** Two tools would be offered under one name. */
  nameClash: 'mcp_tool_name_clash',
} as const satisfies Record<string, FailureType>;
