import { z } from 'zod';
import type { SessionConfig } from './api';
import { BUILTIN_TOOLS, type BuiltinToolName } from './tools/registry';

/**
 * Bounds and defaults of the session's numeric settings. The session's input schema is
 * built from them, and the client's flags, their help and their error lines read the same
 * numbers, so what the help promises is exactly what the session accepts.
 */
export const SESSION_LIMITS = {
  /**
   * Steps one turn may take before it ends `completed` with reason `step_limit`. The
   * limit stops a runaway loop (a model that keeps calling tools); it does not bound a
   * session, which runs any number of turns and continues as new between them. The
   * ceiling comes from that: a turn cannot continue as new in its middle, so one turn's
   * history must fit within Temporal's limit of 51,200 events. A step with three tool
   * calls is about 20 events (the benchmark's 200 steps took 3,881), each further call
   * about 3 more: 500 steps of 10 calls stay near 21,000 events, on top of a history of
   * at most `continueAsNewAfterEvents`.
   */
  maxSteps: { min: 1, max: 500, default: 50 },
  /**
   * Output tokens of one LLM call. The default is what every current frontier model
   * accepts for one response (Claude 4 Opus 32,000, Sonnet and Haiku 4.5 64,000, GPT-5
   * 128,000, GPT-4.1 32,768, Gemini 2.5 65,536): room for an agent step that writes a
   * whole file, where 4,096 cut answers short at `max_tokens`. It is not higher because
   * Anthropic refuses a request whose prompt + max_tokens exceeds the context window, so
   * every token of cap is a token less for a long conversation. Models with a
   * smaller limit (GPT-4o 16,384, Claude 3.5 Haiku 8,192, a local server with a small
   * context) refuse it as `invalid_request`: set `--max-tokens` or `AGENT_MAX_TOKENS` for
   * them. The ceiling is above the largest output any model accepts, so it only catches
   * a typo; the provider enforces the model's own limit.
   */
  maxTokens: { min: 1, max: 200_000, default: 32_000 },
  /** Read-only tool calls that may run at once. */
  toolConcurrency: { min: 1, max: 32, default: 4 },
  /** With no message and no turn for this long, the session ends by itself. */
  idleTimeoutMs: { min: 1_000, max: 30 * 24 * 3600_000, default: 3600_000 },
  /** How long a side-effecting call waits for a human's decision before it is refused. */
  approvalTimeoutMs: { min: 1_000, max: 7 * 24 * 3600_000, default: 3600_000 },
  /** A tool call's startToClose timeout: below 100 ms Temporal's timer resolution dominates. */
  toolTimeoutMs: { min: 100, max: 24 * 3600_000 },
  /**
   * Continue-as-new after this many history events, at the first moment no turn runs.
   * The ceiling leaves one turn of `maxSteps.max` steps room below Temporal's 51,200
   * events, since the turn that crosses the threshold runs to its end first.
   */
  continueAsNewAfterEvents: { min: 20, max: 20_000 },
  /** The model's context window in tokens, when the table (contracts/model-windows.ts) does not know it or knows it wrong. */
  contextWindow: { min: 1_000, max: 10_000_000 },
  /** Tool results larger than 4 KiB from more than this many turns back are sent as one line. */
  clearToolResultsAfter: { min: 1, max: 10_000 },
  /**
   * With fallbacks: a call (or its provider and model on the worker) failing this long on a
   * failure a fallback takes goes to the next model without waiting out the ladder's budget.
   */
  fallbackAfterMs: { min: 1_000, max: 240_000, default: 30_000 },
  /** With fallbacks: back to the first model this long after a switch; absent, at the next turn. */
  fallbackReturnAfterMs: { min: 1_000, max: 7 * 24 * 3600_000 },
} as const;

/** Models after the first a session may fall back to. */
export const MAX_FALLBACKS = 4;

/**
 * The share of the context window the next request may reach before the session compacts
 * first. Below 0.1 it would compact at nearly every step; above 0.95 the estimate's error
 * and the answer's own tokens could pass the window before a compaction runs.
 */
export const COMPACT_AT = { min: 0.1, max: 0.95, default: 0.75 } as const;

const compactAtMessage = `must be a fraction of the context window from ${COMPACT_AT.min} to ${COMPACT_AT.max}`;
export const CompactAtSchema = z.number({ error: compactAtMessage }).min(COMPACT_AT.min, { error: compactAtMessage }).max(COMPACT_AT.max, { error: compactAtMessage });

type LimitName = keyof typeof SESSION_LIMITS;

/** A whole number within its limits, refused with a message that states the range. */
export function boundedInt(name: LimitName) {
  const { min, max } = SESSION_LIMITS[name];
  const message = `must be a whole number from ${min} to ${max}`;
  return z.number({ error: message }).int({ error: message }).min(min, { error: message }).max(max, { error: message });
}

export const TOOL_NAMES = BUILTIN_TOOLS.map((t) => t.name) as [BuiltinToolName, ...BuiltinToolName[]];

const isToolName = (name: string): name is BuiltinToolName => (TOOL_NAMES as string[]).includes(name);

export const ToolNameSchema = z.enum(TOOL_NAMES, {
  error: (issue) => `unknown tool ${JSON.stringify(issue.input)} (tools: ${TOOL_NAMES.join(', ')})`,
});

/** Per-tool startToClose timeouts in ms, keyed by a built-in tool's name. */
export const ToolTimeoutsSchema = z.record(z.string(), boundedInt('toolTimeoutMs')).superRefine((timeouts, ctx) => {
  for (const name of Object.keys(timeouts)) {
    if (!isToolName(name)) ctx.addIssue({ code: 'custom', path: [name], message: `unknown tool ${JSON.stringify(name)} (tools: ${TOOL_NAMES.join(', ')})` });
  }
});

/**
 * The settings a session runs with, as the `state` Query and `run --json` report them:
 * every input field but the conversation it carries (`continued`, `fork`), the fields
 * `SessionState` already has at its top level, and the revision of the commands its runs
 * issue (contracts/session-revision.ts), which nobody sets by hand; each default filled in.
 */
export type SessionSettings = Omit<SessionConfig, 'model' | 'system' | 'retryPolicy' | 'continued' | 'fork' | 'tools' | 'agent' | 'revision'> & { tools: BuiltinToolName[] };

export function settingsInForce(config: SessionConfig): SessionSettings {
  const { model: _model, system: _system, retryPolicy: _retryPolicy, continued: _continued, fork: _fork, agent: _agent, revision: _revision, tools, ...settings } = config;
  return { ...settings, tools: tools ?? [...TOOL_NAMES] };
}
