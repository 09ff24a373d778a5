import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { WORKFLOW_ERROR_TYPES } from '../../contracts/errors';
import { httpRequestTool } from '../../contracts/tools/http-request';
import { BUILTIN_TOOLS, findTool, validateToolInput, type BuiltinTool, type BuiltinToolName, type ToolDefinition } from '../../contracts/tools/registry';
import { RunToolRequestSchema, type RunToolRequest, type ToolActivities, type ToolOutcome } from '../../contracts/tools/tool-outcome';
import { runCalculator } from './calculator';
import { compileHttpAllowlist, HTTP_ALLOWLIST_ENV } from './http-allowlist';
import { runHttpRequest, systemResolveHost, type ResolveHost } from './http-request';
import { runReadFile } from './read-file';
import type { ToolRunContext } from './tool-run-context';
import { WORKSPACE_ENV } from './workspace-path';
import { runWriteFile } from './write-file';

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024;
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/**
 * Everything tool results are sent to the model through lands in the workflow history,
 * whose payloads Temporal caps at 2 MiB; 1 MiB leaves room for the rest of the event.
 */
export const MAX_CONTENT_BYTES = 1024 * 1024;

/** The shortest gap between the request deadline and the activity's own timeout. */
const HTTP_DEADLINE_MARGIN_MS = 5_000;

const ToolActivitiesConfigSchema = z.object({
  /** The undici Dispatcher for http_request (an `Agent`, or a `MockAgent` in tests). */
  dispatcher: z.custom<Dispatcher>((value) => typeof (value as { dispatch?: unknown } | null)?.dispatch === 'function', {
    error: 'must be an undici Dispatcher',
  }),
  /**
   * `AGENT_WORKSPACE`: the directory read_file and write_file are confined to. A relative
   * path is taken from the worker's cwd; the directory is created when missing, so the
   * default (`.data/workspace`) works on a fresh checkout.
   */
  workspaceDir: z.string().min(1, { error: 'must not be empty' }),
  /** `AGENT_HTTP_ALLOWLIST` entries (see http-allowlist.ts). Default: none, so http_request reaches nothing. */
  httpAllowlist: z.array(z.string()).default([]),
  /**
   * How http_request turns a host name into addresses. Default: the system resolver. Tests
   * give names the addresses they need without asking DNS, so no query leaves the machine.
   */
  resolveHost: z.custom<ResolveHost>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  /** Response body bytes shown to the model. Default 64 KiB. */
  maxResponseBytes: z.number().int().min(1).max(MAX_CONTENT_BYTES).default(DEFAULT_MAX_RESPONSE_BYTES),
  /** File bytes read_file shows to the model. Default 64 KiB. */
  maxFileBytes: z.number().int().min(1).max(MAX_CONTENT_BYTES).default(DEFAULT_MAX_FILE_BYTES),
  /**
   * Deadline of one HTTP exchange. Default 30 s. It must end well before the activity's
   * startToClose, so a slow target becomes an error result instead of a failed step.
   */
  httpTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(httpRequestTool.timeouts.startToCloseMs - HTTP_DEADLINE_MARGIN_MS, {
      error: `must be at most ${httpRequestTool.timeouts.startToCloseMs - HTTP_DEADLINE_MARGIN_MS} (the http_request activity's startToClose minus ${HTTP_DEADLINE_MARGIN_MS} ms)`,
    })
    .default(DEFAULT_HTTP_TIMEOUT_MS),
});
export type ToolActivitiesConfig = z.input<typeof ToolActivitiesConfigSchema>;

const ENV_NAMES: Record<string, string> = { workspaceDir: WORKSPACE_ENV, httpAllowlist: HTTP_ALLOWLIST_ENV };

/** Validated once, when the worker starts, with a message that names the setting. */
function parseConfig(config: ToolActivitiesConfig) {
  const parsed = ToolActivitiesConfigSchema.safeParse(config);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? 'config');
      return `${key}${ENV_NAMES[key] ? ` (${ENV_NAMES[key]})` : ''}: ${issue.message}`;
    });
    throw new Error(`invalid tool configuration: ${problems.join('; ')}`);
  }
  const workspaceDir = path.resolve(parsed.data.workspaceDir);
  try {
    mkdirSync(workspaceDir, { recursive: true });
  } catch (error) {
    throw new Error(`invalid tool configuration: workspaceDir (${WORKSPACE_ENV}): cannot create ${workspaceDir}: ${(error as Error).message}`);
  }
  if (!statSync(workspaceDir).isDirectory()) throw new Error(`invalid tool configuration: workspaceDir (${WORKSPACE_ENV}): ${workspaceDir} is not a directory`);
  return { ...parsed.data, workspaceDir, allowlist: compileHttpAllowlist(parsed.data.httpAllowlist) };
}

type InputOf<K extends BuiltinToolName> = Extract<BuiltinTool, { name: K }> extends ToolDefinition<infer I> ? I : never;
type Implementations = {
  [K in BuiltinToolName]: (input: InputOf<K>, request: RunToolRequest, context: ToolRunContext) => Promise<ToolOutcome> | ToolOutcome;
};

/** The activity's failure for states only a bug can produce: no retry will fix them. */
function internalFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: WORKFLOW_ERROR_TYPES.internal, nonRetryable: true });
}

export type ToolRunner = (request: RunToolRequest, context: ToolRunContext) => Promise<ToolOutcome>;

/** The tool logic without Temporal: what `runTool` does, callable from a plain test. */
export function createToolRunner(config: ToolActivitiesConfig): ToolRunner {
  const settings = parseConfig(config);
  const files = { workspaceDir: settings.workspaceDir, maxFileBytes: settings.maxFileBytes };
  const http = {
    dispatcher: settings.dispatcher,
    allowlist: settings.allowlist,
    maxResponseBytes: settings.maxResponseBytes,
    timeoutMs: settings.httpTimeoutMs,
    resolveHost: settings.resolveHost ?? systemResolveHost,
  };
  const implementations: Implementations = {
    calculator: (input) => runCalculator(input),
    http_request: (input, request, context) => runHttpRequest(input, http, { ...context, idempotencyKey: request.idempotencyKey }),
    read_file: (input, _request, context) => runReadFile(input, files, context),
    write_file: (input, _request, context) => runWriteFile(input, files, context),
  };

  return async (rawRequest, context) => {
    const envelope = RunToolRequestSchema.safeParse(rawRequest);
    if (!envelope.success) throw internalFailure(`runTool called with a malformed request: ${z.prettifyError(envelope.error)}`);
    const request = envelope.data;
    const tool = findTool(request.name, BUILTIN_TOOLS);
    // The workflow only dispatches registered tools, so this is a worker/workflow version mismatch.
    if (tool === undefined) throw internalFailure(`this worker has no tool named "${request.name}"`);
    // The trust boundary: the activity does not assume the workflow validated.
    const validation = validateToolInput(tool, request.input);
    if (!validation.ok) return { code: 'error', content: validation.content };
    if (tool.classify(validation.input) === 'side_effecting' && request.idempotencyKey === undefined) {
      throw internalFailure(`side-effecting ${tool.name} call ${request.callId} was dispatched without an idempotency key`);
    }
    const run = implementations[tool.name as BuiltinToolName] as (input: unknown, request: RunToolRequest, context: ToolRunContext) => Promise<ToolOutcome> | ToolOutcome;
    return run(validation.input, request, context);
  };
}

/**
 * The tool activities for the worker. One activity, `runTool`, serves every tool: the
 * workflow sets timeouts and retries per call (see `toolActivityOptions`), so separate
 * activity types would add names without adding control.
 */
export function createToolActivities(config: ToolActivitiesConfig): ToolActivities {
  const runner = createToolRunner(config);
  return {
    async runTool(request) {
      const context = Context.current();
      const heartbeatTimeoutMs = context.info.heartbeatTimeoutMs;
      // A held-open request makes no progress to report, yet the worker is alive: beat on a
      // timer so the heartbeat timeout only fires when the worker is gone. Heartbeats are
      // also how cancellation reaches the activity. A third of the timeout survives one lost beat.
      const timer = heartbeatTimeoutMs ? setInterval(() => context.heartbeat(), Math.max(100, Math.floor(heartbeatTimeoutMs / 3))) : undefined;
      try {
        return await runner(request, { signal: context.cancellationSignal, onProgress: (details) => context.heartbeat(details) });
      } finally {
        if (timer !== undefined) clearInterval(timer);
      }
    },
  };
}
