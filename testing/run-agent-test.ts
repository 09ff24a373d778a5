import { randomUUID } from 'node:crypto';
import type { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Agent } from 'undici';
import { endSession, readLog, sendAndWait, startSession, type SessionHandle, type StartOptions, type TurnResult } from '../client/sessions';
import type { AgentDefinition } from '../contracts/agents/agent-definition';
import type { CustomTool } from '../contracts/tools/custom-tool';
import type { ProviderId } from '../contracts/model-ref';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import type { SessionEvent } from '../contracts/session-log';
import { parseWorkerEnv } from '../worker/config';
import { readWorkerFiles } from '../worker/config-files';
import { createAgentWorker, WORKFLOWS_PATH } from '../worker/create-worker';
import { addSearchAttributes, searchAttributeGaps } from '../worker/search-attribute-gaps';
import type { FakeModel } from './fake-model';

/**
 * What `runAgentTest` needs of a `TestWorkflowEnvironment` (of `@temporalio/testing`):
 * `createLocal`, `createTimeSkipping` and `createFromExistingServer` all give it. Spelled
 * out here so the package does not depend on the testing SDK, which the user's project
 * brings as a development dependency.
 */
export interface AgentTestEnvironment {
  readonly client: Client;
  readonly connection: Connection;
  readonly nativeConnection: NativeConnection;
  readonly namespace?: string;
  readonly supportsTimeSkipping: boolean;
}

export interface AgentTestOptions {
  env: AgentTestEnvironment;
  model: FakeModel;
  /** The user's message that starts the turn. */
  message: string;
  /** Tools of one's own (`defineTool`) the worker runs; an agent's own are added to them. */
  tools?: readonly CustomTool[];
  /** Agents (`defineAgent`) the worker serves, which `session.agent` names. */
  agents?: readonly AgentDefinition[];
  /**
   * The session, as `startSession` of durable-agent-worker/client takes it: `agent` by name,
   * `customTools`, built-in `tools`, approvals, limits, budgets… Without a model or an agent,
   * the model is the fake's, in `provider`'s wire format.
   */
  session?: Omit<StartOptions, 'workflowId'>;
  /** Which wire format the default model speaks. Default `anthropic`. */
  provider?: ProviderId;
  /**
   * Worker settings, as the variables `npm run worker` reads (docs/configuration.md), e.g.
   * `AGENT_WORKSPACE` or `AGENT_LLM_IDLE_TIMEOUT_MS`. The providers' URLs and keys are the
   * fake model's, and the task queue is one of the run's own.
   */
  workerEnv?: Record<string, string>;
}

export interface AgentTestRun {
  workflowId: string;
  /** How the turn ended: a failed or cancelled turn is an outcome, not an exception. */
  outcome: TurnResult;
  /** The session's log after the turn: every message, tool call and result, as `agent log` shows it. */
  log: SessionEvent[];
  /** The text of the turn's last answer; undefined when the model gave none. */
  answer: string | undefined;
}

/**
 * Runs one turn of a session on a worker of its own against the fake model: starts the
 * worker on a fresh task queue, starts the session, sends the message, waits for the
 * turn, reads the log, ends the session and stops the worker. On a time-skipping
 * environment the turn's waits (a `Retry-After`, the retry ladder's backoff, an approval's
 * timeout) pass in server time, skipped, instead of on the clock.
 */
export async function runAgentTest(options: AgentTestOptions): Promise<AgentTestRun> {
  const { env, model } = options;
  const namespace = env.namespace ?? 'default';
  await registerSearchAttributes(env, namespace);
  const workerEnv = parseWorkerEnv({ ...options.workerEnv, ...model.providerEnv(), AGENT_TASK_QUEUE: `agent-test-${randomUUID()}` });
  const dispatcher = new Agent();
  try {
    const agents = options.agents ?? [];
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      namespace,
      env: workerEnv,
      dispatcher,
      tools: [...(options.tools ?? []), ...agents.flatMap((agent) => agent.customTools)],
      agents,
      ...readWorkerFiles(workerEnv, { ...process.env, ...options.workerEnv }),
      workflowBundle: await workflowBundle(),
    });
    return await worker.runUntil(async () => {
      const session = options.session ?? {};
      const defaultModel = session.model === undefined && session.agent === undefined ? { model: model.ref(options.provider) } : {};
      const handle = await startSession(env.client, workerEnv, { ...defaultModel, ...session });
      try {
        const outcome = await whileTimeSkips(env, () => sendAndWait(handle, options.message));
        const log = await readLog(handle);
        await endAndWait(env, handle);
        return { workflowId: handle.workflowId, outcome, log, answer: lastAnswer(log) };
      } catch (error) {
        // A test that failed leaves no session running on a server the next test reuses.
        await handle.terminate('runAgentTest failed').catch(() => undefined);
        throw error;
      }
    });
  } finally {
    // Not `close`: a request the fake model stalls for ever would keep it waiting.
    await dispatcher.destroy();
  }
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The session workflow, bundled once per test process: bundling takes seconds, a worker start does not. A failed bundling is tried again next time. */
function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } }).catch((error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

const registered = new WeakSet<AgentTestEnvironment>();
/**
 * The session writes its status, steps, model and cost to search attributes, which a fresh
 * test server lacks. The time-skipping server cannot list them and accepts them added once;
 * a dev server gets what it misses.
 */
async function registerSearchAttributes(env: AgentTestEnvironment, namespace: string): Promise<void> {
  if (registered.has(env)) return;
  const operator = env.connection.operatorService;
  const missing = env.supportsTimeSkipping ? AGENT_SEARCH_ATTRIBUTES : (await searchAttributeGaps(operator, namespace, AGENT_SEARCH_ATTRIBUTES)).missing;
  await addSearchAttributes(operator, namespace, missing);
  registered.add(env);
}

/**
 * The time-skipping server skips time only while a client waits for a workflow's result;
 * a turn is awaited through an Update, so the wait is opened for it here.
 */
async function whileTimeSkips<T>(env: AgentTestEnvironment, wait: () => Promise<T>): Promise<T> {
  const testService = env.supportsTimeSkipping ? env.connection.testService : undefined;
  if (!testService) return wait();
  await testService.unlockTimeSkipping({});
  try {
    return await wait();
  } finally {
    await testService.lockTimeSkipping({});
  }
}

/**
 * Ends the session and waits for its end, so the run leaves nothing running. A
 * time-skipping server is not sent the `end` Update, as it forgets an Update whose workflow
 * completes and answers it "not found": there the session ends by its idle timer, which
 * passes skipped while the result is awaited.
 */
async function endAndWait(env: AgentTestEnvironment, handle: SessionHandle): Promise<void> {
  if (!env.supportsTimeSkipping) await endSession(handle);
  await handle.result();
}

function lastAnswer(log: readonly SessionEvent[]): string | undefined {
  const answers = log.flatMap((event) => (event.type === 'assistant' && event.message.text !== '' ? [event.message.text] : []));
  return answers.at(-1);
}
