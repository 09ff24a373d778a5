import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { Client, WithStartWorkflowOperation, WorkflowUpdateFailedError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
// The SDK's writer of the history JSON that the CLI, the UI and `historyFromJSON` read; 1.24 exports it only here.
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  SESSION_WORKFLOW,
  SessionRunInputSchema,
  SendMessageSchema,
  awaitTurnUpdate,
  describeIssues,
  endUpdate,
  sendUpdate,
  stateQuery,
  type SessionInput,
  type SessionState,
  type TurnOutcome,
} from '../contracts/api';
import type { SessionSettings } from '../contracts/session-settings';
import { chainWindow, type ModelWindowTable } from '../contracts/model-windows';
import { spendOf, type Spend } from '../contracts/spend';
import { carriedSpend, countsAtCut, type ForkSource } from '../contracts/fork-carry';
import type { HandedOffTo } from '../contracts/handoffs';
import type { agentSession } from '../workflows/session';
import type { Message, StopReason } from '../contracts/messages';
import type { FailureSummary, SessionEvent } from '../contracts/session-log';
import { clientDataConverter, encryptionKeyFromEnv, type EncryptionKey } from '../encryption/data-converter';
import { clientTracingOptions } from '../tracing/tracing-client';
import { connectClientConnection } from '../connection/connect-client';
import { ConnectionFailedError } from '../connection/errors';
import type { ClientEnv } from './config';
import { ConfigError } from '../config/config-error';
import { ServerUnreachableError } from './errors';
import { followProgress } from './progress';
import { readForkStart, readLogChain, readSessionLog, temporalSessionRuns } from './log-chain';
import { readableConversation } from './output';
import { resolveAgent } from './agents';
import { withAgentSettings, type AgentRecord } from '../contracts/agents/agent-record';
import { messageOf, typedOutput, type MessageOptions } from './message-output';
import { outputSchemaNotes } from '../contracts/output-compat';
import { startAttributes, startingWithAttributes } from './start-attributes';
import { SESSION_REVISION } from '../contracts/session-revision';
import { parseModelRef } from '../contracts/model-ref';

export type SessionHandle = WorkflowHandle<typeof agentSession>;

/**
 * @param encryption the payload key (encryption/); by default from AGENT_ENCRYPTION_KEY
 *   and AGENT_ENCRYPTION_KEY_ID. It must be the worker's, or the client reads ciphertext.
 */
export async function connectClient(
  env: Pick<ClientEnv, 'connection'>,
  encryption: EncryptionKey | undefined = encryptionKeyFromEnv(process.env),
): Promise<Client> {
  const connection = await connectClientConnection(env.connection).catch((error: unknown) => {
    throw error instanceof ConnectionFailedError ? new ServerUnreachableError(error.message) : error;
  });
  return new Client({
    connection,
    namespace: env.connection.namespace,
    ...(encryption ? { dataConverter: clientDataConverter(encryption) } : {}),
    ...(await clientTracingOptions()),
  });
}

/** The Temporal UI page of a workflow run's history. */
export function uiLink(env: Pick<ClientEnv, 'TEMPORAL_UI_URL' | 'connection'>, workflowId: string, runId?: string): string {
  const run = runId ? `/${encodeURIComponent(runId)}` : '';
  return `${env.TEMPORAL_UI_URL}/namespaces/${encodeURIComponent(env.connection.namespace)}/workflows/${encodeURIComponent(workflowId)}${run}/history`;
}

export interface StartOptions extends Omit<SessionInput, 'model' | 'agent'> {
  /** `provider:model`; required unless the agent gives it. */
  model?: string;
  /**
   * The worker's agent (defineAgent) the session runs as, by name: the worker resolves it
   * (client/agents.ts), and every setting given here wins over the agent's. An unknown name
   * is refused before anything starts. A fork passes its source's agent as resolved then.
   */
  agent?: string | AgentRecord;
  workflowId?: string;
  /**
   * Told, one line each and before the session starts, what its provider's structured-output
   * mode does with its output schema (contracts/output-compat.ts): what a strict mode
   * refuses, and how the schema is sent instead. Not called for a schema a provider takes whole.
   */
  onNotice?: (line: string) => void;
}

/**
 * What a session is started with: the task queue, and the model windows table the client
 * knows (MODEL_WINDOWS merged with AGENT_MODELS_FILE, see models-file.ts); the built-in
 * table when absent.
 */
export type StartEnv = Pick<ClientEnv, 'AGENT_TASK_QUEUE'> & Partial<Pick<ClientEnv, 'modelWindows'>>;

export async function startSession(client: Client, env: StartEnv, options: StartOptions): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentSession>> {
  const { start, model } = await startOptionsOf(client, env, options);
  return startingWithAttributes((withAttributes) => client.workflow.start<typeof agentSession>(SESSION_WORKFLOW, { ...start, ...(withAttributes ? startAttributes(model, 'idle') : {}) }));
}

/** A session started with its first message, and that message's turn. */
export interface SessionWithTurn {
  handle: WorkflowHandleWithFirstExecutionRunId<typeof agentSession>;
  /** The `send` Update that carried the message. */
  updateId: string;
  /** Waits for the message's turn; nothing is asked of the server until it is called. */
  turn(): Promise<TurnResult>;
}

/**
 * Starts a session with its first message in the same request (update-with-start): the
 * message is accepted in the session's first workflow task, where a start and then `send`
 * cost a second round trip and a second workflow task. It returns once the message is
 * accepted; its turn is awaited separately.
 */
export async function startSessionWithMessage(client: Client, env: StartEnv, options: StartOptions, text: string): Promise<SessionWithTurn> {
  const message = messageOf(text);
  const given = await startOptionsOf(client, env, options);
  const { start, update } = await startingWithAttributes(async (withAttributes) => {
    const start = new WithStartWorkflowOperation<typeof agentSession>(SESSION_WORKFLOW, { ...given.start, ...(withAttributes ? startAttributes(given.model, 'running') : {}), workflowIdConflictPolicy: 'FAIL' });
    return { start, update: await client.workflow.startUpdateWithStart(sendUpdate, { args: [message], waitForStage: 'ACCEPTED', startWorkflowOperation: start }) };
  });
  const handle = await start.workflowHandle();
  return { handle: withRunId(handle, update.workflowRunId), updateId: update.updateId, turn: () => turnResultOf(update.result()) };
}

/** The session's start options, its input checked here: a refusal is the client's one line, not a failed workflow. */
async function startOptionsOf(client: Client, env: StartEnv, options: StartOptions) {
  const { workflowId, agent, onNotice, ...given } = options;
  // A name is resolved by the worker, which has the definitions; a fork's agent comes resolved.
  const record = typeof agent === 'string' ? (await resolveAgent(client, env, agent)).record : agent;
  const withAgent = (record ? { ...given, agent: record } : given) as SessionInput;
  const effective = withAgentSettings(withAgent);
  // This release's client starts sessions at the current revision: its commands (contracts/session-revision.ts).
  const input = { ...withAgent, ...knownWindow(effective, env.modelWindows), revision: withAgent.revision ?? SESSION_REVISION.current };
  const parsed = SessionRunInputSchema.safeParse(withAgentSettings(input));
  if (!parsed.success) throw new ConfigError(`invalid session options: ${describeIssues(parsed.error)}`);
  // The schema may be the agent's: only the input as resolved here knows it.
  const { outputSchema, model } = parsed.data;
  if (outputSchema && onNotice) outputSchemaNotes(parseModelRef(model).provider, outputSchema).forEach((line) => onNotice(line));
  const start = {
    taskQueue: env.AGENT_TASK_QUEUE,
    workflowId: workflowId ?? `session-${randomUUID()}`,
    args: [input] as [SessionInput],
    staticSummary: record ? `agent session · ${record.name} · ${parsed.data.model}` : `agent session · ${parsed.data.model}`,
  };
  return { start, model };
}

/** The handle of the run an update-with-start started: the run that accepted its Update. */
function withRunId(handle: WorkflowHandle<typeof agentSession>, runId: string | undefined): WorkflowHandleWithFirstExecutionRunId<typeof agentSession> {
  if (!runId) throw new Error(`session ${handle.workflowId} accepted its first message without naming its run`);
  return { ...handle, firstExecutionRunId: runId };
}

/**
 * Without a `contextWindow`, the model's window from the client's table goes in the session
 * input: the session then compacts against the window it started with, whatever table the
 * worker that runs it has. A model the table does not know gets none, and the session
 * does not compact (watch says so).
 */
export function knownWindow(input: Pick<StartOptions, 'model' | 'contextWindow' | 'fallbacks'>, table: ModelWindowTable | undefined): Pick<SessionInput, 'contextWindow'> {
  // Without a model here the session refuses its input; the window has nothing to go with.
  if (input.contextWindow !== undefined || input.model === undefined) return {};
  // A step may go to any model of the chain: the smallest window known among them (docs/fallback.md).
  const window = chainWindow([input.model, ...(input.fallbacks ?? [])], table);
  return window === undefined ? {} : { contextWindow: window };
}

export interface TurnResult<O = unknown> {
  status: TurnOutcome['status'];
  turn?: number;
  /** Why a completed turn ended: the model answered, or it reached the session's `maxSteps`. */
  reason?: TurnOutcome['reason'];
  failure?: FailureSummary;
  /** A turn with an output schema that completed `answered`: its answer's value (docs/structured-output.md). */
  output?: O;
  /** A turn that ended `handoff`: the session that has the conversation now (contracts/handoffs.ts). */
  handedOffTo?: HandedOffTo;
  /** `sendAndWait` followed a handoff: the session whose turn this result is, which answered the message. */
  answeredBy?: string;
}

/**
 * Sends a message and waits for its turn; a failed or cancelled turn is a result, not an
 * exception. With `outputSchema` the turn's answer must match it; given a zod schema there,
 * or the agent, `output` is typed by it.
 */
export async function sendAndWait<S extends z.ZodType = z.ZodType>(handle: SessionHandle, text: string, options: MessageOptions<S> = {}): Promise<TurnResult<z.output<S>>> {
  const result = await followHandoff(handle, await turnResultOf(handle.executeUpdate(sendUpdate, { args: [messageOf(text, options)] })));
  const { output, ...rest } = result;
  const typed = typedOutput(options, output);
  return { ...rest, ...(typed === undefined ? {} : { output: typed }) };
}

/**
 * A turn that handed the conversation over is answered by the session it went to, in its
 * turn of the same number: that turn's result, naming that session (`answeredBy`), and where
 * the conversation is now (`handedOffTo`). Any other result as it is.
 */
export async function followHandoff(handle: Pick<SessionHandle, 'client'>, result: TurnResult): Promise<TurnResult> {
  const to = result.reason === 'handoff' ? result.handedOffTo : undefined;
  if (!to) return result;
  const target = handle.client.getHandle<typeof agentSession>(to.workflowId);
  const answered = await turnResultOf(target.executeUpdate(awaitTurnUpdate, { args: [{ turn: to.turn }] }));
  return { ...answered, handedOffTo: to, answeredBy: to.workflowId };
}

async function turnResultOf(outcome: Promise<TurnOutcome>): Promise<TurnResult> {
  try {
    const { status, turn, reason, output, handedOffTo } = await outcome;
    return { status, turn, ...(reason ? { reason } : {}), ...(output === undefined ? {} : { output }), ...(handedOffTo ? { handedOffTo } : {}) };
  } catch (error) {
    const failed = turnOutcomeOf(error);
    if (failed) return failed;
    throw error;
  }
}

/** The outcome carried by a failed `send`/`awaitTurn` Update, if that is what this error is: never with an output. */
export function turnOutcomeOf(error: unknown): TurnResult<never> | undefined {
  if (!(error instanceof WorkflowUpdateFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const [outcome] = error.cause.details ?? [];
  if (!isTurnOutcome(outcome)) return undefined;
  return { status: outcome.status, turn: outcome.turn, ...(outcome.failure ? { failure: outcome.failure } : {}) };
}

function isTurnOutcome(value: unknown): value is TurnOutcome {
  return typeof value === 'object' && value !== null && 'status' in value && 'turn' in value;
}

/** The whole log, across the session's runs (see log-chain.ts), read page by page. */
export async function readLog(handle: Pick<SessionHandle, 'client' | 'workflowId'>): Promise<SessionEvent[]> {
  return readSessionLog(handle.client, handle.workflowId);
}

/**
 * The log of the session's latest run only: what a question about its running or last turn,
 * or its tools now, needs (a run holds its own turns, and a copy of the MCP tool list its
 * tail left out). The earlier runs are not queried.
 */
export async function readLatestRunLog(handle: Pick<SessionHandle, 'client' | 'workflowId' | 'query'>): Promise<{ state: SessionState; events: SessionEvent[] }> {
  const state = await handle.query(stateQuery);
  // A run on a worker version from before the log spanned runs answers without firstSeq: it holds the whole log.
  const firstSeq = (state as Partial<SessionState>).firstSeq ?? 0;
  return { state, events: await readSessionLog(handle.client, handle.workflowId, { fromSeq: firstSeq }) };
}

export async function endSession(handle: SessionHandle): Promise<void> {
  await handle.executeUpdate(endUpdate);
}

export interface RunResult {
  workflowId: string;
  runId: string;
  status: TurnOutcome['status'];
  reason?: TurnOutcome['reason'];
  failure?: FailureSummary;
  /** With an output schema (`--output-schema`, the agent's `output`): the answer's value, once the turn completed answered. */
  output?: unknown;
  messages: Message[];
  /** How the turn's last answer stopped; `refusal` when the model refused. Absent when no answer was recorded. */
  stopReason?: StopReason;
  /** The turn's tokens and `costUsd` (null when a model has no price). */
  usage: Spend;
  /** The settings the session ran with, as its `state` Query reports them (defaults filled in). */
  settings: RunSettings;
  /** The turn handed the conversation over: the session that answered it (whose messages, usage and settings these are). */
  handedOffTo?: HandedOffTo;
}

export type RunSettings = SessionSettings & Pick<SessionState, 'model' | 'retryPolicy'>;

/** `run`: start a session, send one prompt, wait for its turn, and end the session unless kept. */
export async function runOnce(
  client: Client,
  env: StartEnv,
  options: StartOptions & { prompt: string; keep?: boolean; onProgress?: (line: string) => void },
): Promise<RunResult> {
  const { prompt, keep, onProgress, ...start } = options;
  if (!SendMessageSchema.safeParse({ text: prompt }).success) throw new ConfigError('--prompt must not be empty');
  const started = await startSessionWithMessage(client, env, start, prompt);
  const { handle } = started;
  const waiting = started.turn();
  if (onProgress) await followProgress(client, handle, waiting, onProgress);
  // A turn that handed the conversation over is answered by the session it went to, which is the one to read and end.
  const turn = await followHandoff(handle, await waiting);
  const answering = turn.answeredBy ? client.workflow.getHandle<typeof agentSession>(turn.answeredBy) : handle;
  const [events, state] = await Promise.all([readLog(answering), answering.query(stateQuery)]);
  if (!keep) await endSession(answering);
  return {
    workflowId: handle.workflowId,
    ...(turn.handedOffTo ? { handedOffTo: turn.handedOffTo } : {}),
    runId: handle.firstExecutionRunId,
    status: turn.status,
    ...(turn.reason ? { reason: turn.reason } : {}),
    ...(turn.failure ? { failure: turn.failure } : {}),
    ...(turn.output === undefined ? {} : { output: turn.output }),
    messages: readableConversation(events),
    ...lastStopReason(events),
    usage: spendOf(events),
    settings: { model: state.model, retryPolicy: state.retryPolicy, ...state.settings },
  };
}

function lastStopReason(events: readonly SessionEvent[]): { stopReason?: StopReason } {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === 'assistant') return { stopReason: e.message.stopReason };
  }
  return {};
}

export interface ForkOptions {
  /** Keep the source's events up to and including this seq; the whole log when absent. */
  atSeq?: number;
  workflowId?: string;
  /** Defaults to the source session's model and system prompt. */
  model?: string;
  system?: string;
}

/**
 * A new session from another one's log. The cut is made here; an open tail (a session
 * terminated mid-step, or a cut inside a step) is repaired by the new session itself.
 * Like a run that continues as new, the fork is given only the events after the last
 * compaction at or before the cut, that compaction included: what the model is sent from
 * there on. So a fork of a long session fits in one payload, and its seqs stay the source's.
 */
export async function forkSession(client: Client, env: StartEnv, sourceId: string, options: ForkOptions = {}) {
  const source = client.workflow.getHandle<typeof agentSession>(sourceId);
  const { atSeq } = options;
  // Below 0 the cut would keep nothing: a fork with an empty log, silently.
  if (atSeq !== undefined && (!Number.isInteger(atSeq) || atSeq < 0)) throw new ConfigError(`atSeq must be the seq of an event of the source, 0 or more (got ${atSeq})`);
  const runs = temporalSessionRuns(client.workflow, sourceId);
  const state = await source.query(stateQuery);
  const settingsNow = state.settings as SessionSettings | undefined;
  // MCP and custom tools alike are offered from the latest `tools/listed`: a fork that lost it
  // to a compaction would list again, from a worker that may have changed them since.
  const listsTools = (settingsNow?.mcp?.length ?? 0) > 0 || (settingsNow?.customTools?.length ?? 0) > 0;
  // The counts at the cut are the source's now less those of the events after it. Without
  // a cut, the fork ends where this state ends: a source still running may have logged more
  // since, which the counts would not include.
  const cut = atSeq ?? (state.events > 0 ? state.events - 1 : undefined);
  const [{ events: kept, toolsListed }, after] = await Promise.all([
    readForkStart(runs, cut, { toolList: listsTools }),
    atSeq === undefined ? Promise.resolve([]) : readLogChain(runs, { fromSeq: atSeq + 1, uptoSeq: state.events }),
  ]);
  const carried = {
    // A source on a worker version from before spend (or usage) was tracked reports none: the fork counts from its events.
    ...carriedSpend(state as ForkSource, kept),
    ...countsAtCut(state as ForkSource, after),
    ...(toolsListed ? { toolsListed: { turn: toolsListed.turn, servers: toolsListed.servers, tools: toolsListed.tools, ...(toolsListed.custom ? { custom: toolsListed.custom } : {}), ...(toolsListed.agents ? { agents: toolsListed.agents } : {}) } } : {}),
  };
  // The window goes with the model: a fork onto another model has the new one's resolved.
  const { contextWindow, ...settings } = carriedSettings(state);
  const model = options.model ?? state.model;
  return startSession(client, env, {
    ...settings,
    ...(contextWindow === undefined || model !== state.model ? {} : { contextWindow }),
    model,
    ...(options.system ?? state.system ? { system: options.system ?? state.system } : {}),
    ...(options.workflowId ? { workflowId: options.workflowId } : {}),
    // The agent as the source resolved it: the fork does not ask today's worker again.
    ...(state.agent ? { agent: state.agent } : {}),
    // The source's whole spend comes along, also what it spent after the cut: a fork cannot reset a budget.
    fork: { fromWorkflowId: sourceId, ...(atSeq === undefined ? {} : { atSeq }), events: kept, ...carried },
  });
}

/**
 * A fork runs as its source runs now: its limits, tools, MCP servers, approvals, its retry
 * policy and its budget as the live Updates last left them. A source on a worker version
 * from before the `state` Query reported its settings gives none: the fork takes defaults.
 */
function carriedSettings(source: SessionState): Omit<StartOptions, 'model'> {
  const settings = source.settings as SessionSettings | undefined;
  if (!settings) return {};
  const { budgetUsd, budgetTokens, budgetWarn, ...rest } = settings;
  const budget = (source.budget as SessionState['budget'] | undefined) ?? { usd: budgetUsd, tokens: budgetTokens, warnAt: budgetWarn };
  return {
    ...rest,
    ...(source.retryPolicy === 'default' ? {} : { retryPolicy: source.retryPolicy }),
    ...(budget.usd === undefined ? {} : { budgetUsd: budget.usd }),
    ...(budget.tokens === undefined ? {} : { budgetTokens: budget.tokens }),
    ...(budget.warnAt === undefined ? {} : { budgetWarn: budget.warnAt }),
  };
}

/**
 * The event history as the JSON that `Worker.runReplayHistory` loads (and the UI's
 * "download" produces): an incident becomes a replay test in one command.
 */
export async function exportHistory(client: Client, workflowId: string, runId?: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return historyToJSON(history);
}
