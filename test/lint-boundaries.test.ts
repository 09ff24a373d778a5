import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The folder boundaries of docs/architecture.md's folder table are lint rules (eslint.config.js):
 * this lints a line of code as if it were in each folder and expects the rule to bite,
 * and the allowed form to pass. Without it, a rule loosened by mistake would go unnoticed
 * until a forbidden import crept in.
 */
const eslint = new ESLint({
  cwd: path.join(import.meta.dirname, '..'),
  // The borders are import rules, which read syntax only: without the type-aware parser
  // (a TypeScript program per file) and the other rules, each case takes milliseconds, not
  // a second, and a mutation of a border costs its trial little.
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => BORDER_RULES.has(ruleId),
});
const BORDER_RULES = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint keeps each folder to its job', () => {
  it.each([
    ['workflows/turn.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", /Node builtins are not available in the workflow sandbox/],
    ['workflows/turn.ts', "import { createToolRunner } from '../activities/tools';\nexport const run = createToolRunner;\n", /Import activities as types only/],
    ['workflows/turn.ts', "import { connectClient } from '../client/sessions';\nexport const connect = connectClient;\n", /does not run in the workflow sandbox/],
    ['contracts/api.ts', "import type { agentSession } from '../workflows/session';\nexport type Session = typeof agentSession;\n", /must not depend on the session workflow/],
    ['client/sessions.ts', "import { agentSession } from '../workflows/session';\nexport const session = agentSession;\n", /workflows\/ is the session workflow/],
    ['activities/llm/activity.ts', "import { runTurn } from '../../workflows/turn';\nexport const turn = runTurn;\n", /workflows\/ is the session workflow/],
    ['client/sessions.ts', "export const load = () => import('../workflows/session');\n", /workflows\/ is the session workflow/],
    ['encryption/failure-converter.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", /Node builtins are not available in the workflow sandbox/],
    ['activities/mcp/connections.ts', "import type { WorkerEnv } from '../../worker/config';\nexport type Env = WorkerEnv;\n", /activities\/ know nothing of the worker's or the client's process/],
    ['activities/llm/activity.ts', "import { connectClient } from '../../client/sessions';\nexport const connect = connectClient;\n", /activities\/ know nothing of the worker's or the client's process/],
    ['client/sessions.ts', "import { createAgentWorker } from '../worker/create-worker';\nexport const create = createAgentWorker;\n", /The client reaches the worker through Temporal only/],
    ['client/commands/command.ts', "import { createActivities } from '../../activities';\nexport const create = createActivities;\n", /The client reaches the worker through Temporal only/],
    ['client/sessions.ts', "export const load = () => import('../worker/create-worker');\n", /The client reaches the worker through Temporal only/],
    ['worker/main.ts', "import { connectClient } from '../client/sessions';\nexport const connect = connectClient;\n", /The worker does not load the client/],
    ['tracing/tracing-client.ts', "import type { WorkerEnv } from '../worker/config';\nexport type Env = WorkerEnv;\n", /loaded by the worker and the client alike/],
    ['config/mcp-config.ts', "import { McpConnections } from '../activities/mcp';\nexport const connections = McpConnections;\n", /loaded by the worker and the client alike/],
    ['connection/connection-config.ts', "import type { ClientEnv } from '../client/config';\nexport type Env = ClientEnv;\n", /loaded by the worker and the client alike/],
    ['gateway/app.ts', "import { createAgentWorker } from '../worker/create-worker';\nexport const create = createAgentWorker;\n", /The gateway reaches the worker through Temporal and the live stream only/],
    ['gateway/routes/sessions.ts', "export const load = () => import('../../activities/tools');\n", /The gateway reaches the worker through Temporal and the live stream only/],
    ['gateway/app.ts', "import { agentSession } from '../workflows/session';\nexport const session = agentSession;\n", /workflows\/ is the session workflow/],
    ['activities/llm/activity.ts', "import { createGateway } from '../../gateway/app';\nexport const create = createGateway;\n", /activities\/ know nothing of the worker's or the client's process, nor of the gateway's/],
    ['worker/main.ts', "export const load = () => import('../gateway/serve');\n", /The worker does not load the client or the gateway/],
    ['tracing/tracing-client.ts', "import type { GatewayKey } from '../gateway/context';\nexport type Key = GatewayKey;\n", /loaded by the worker and the client alike/],
    ['streaming/embedded-publisher.ts', "import type { WorkerEnv } from '../worker/config';\nexport type Env = WorkerEnv;\n", /streaming\/ is loaded by the worker and the gateway alike/],
    ['streaming/nats-link.ts', "export const load = () => import('../gateway/app');\n", /streaming\/ is loaded by the worker and the gateway alike/],
  ])('refuses in %s: %s', async (filePath, code, message) => {
    expect((await problems(filePath, code)).join('\n')).toMatch(message);
  }, 60_000);

  // Every folder of the build, each with one of the four folders that run the product, types included.
  it.each([
    ['activities/llm/activity.ts', "import { startLocalAgent } from '../../harness/local-agent';\nexport const start = startLocalAgent;\n"],
    ['client/sessions.ts', "import type { LocalAgent } from '../harness/local-agent';\nexport type Agent = LocalAgent;\n"],
    ['worker/main.ts', "import { MUTATIONS } from '../scripts/mutations/catalogue';\nexport const all = MUTATIONS;\n"],
    ['worker/main.ts', "export const load = () => import('../harness/dev-server');\n"],
    ['workflows/turn.ts', "import type { LocalAgent } from '../harness/local-agent';\nexport type Agent = LocalAgent;\n"],
    ['contracts/api.ts', "import { eventually } from '../test/support/eventually';\nexport const wait = eventually;\n"],
    ['config/config-error.ts', "import { eventually } from '../test/support/eventually';\nexport const wait = eventually;\n"],
    ['connection/connection-config.ts', "import type { WorkerChildConfig } from '../bench/worker-protocol';\nexport type Child = WorkerChildConfig;\n"],
    ['encryption/encryption-key.ts', "import { MUTATIONS } from '../scripts/mutations/catalogue';\nexport const all = MUTATIONS;\n"],
    ['tracing/tracing-provider.ts', "import { startLocalAgent } from '../harness/local-agent';\nexport const start = startLocalAgent;\n"],
    ['index.ts', "export { startLocalAgent } from './harness/local-agent';\n"],
    ['testing/run-agent-test.ts', "import { workflowBundle } from '../harness/local-agent';\nexport const bundle = workflowBundle;\n"],
    ['gateway/app.ts', "import { startLocalGateway } from '../harness/gateway';\nexport const start = startLocalGateway;\n"],
  ])('refuses in %s what runs the product: %s', async (filePath, code) => {
    expect((await problems(filePath, code)).join('\n')).toMatch(/Product code does not import scripts\/, test\/, bench\/ or harness\//);
  }, 60_000);

  // The fake model ships in the package for users' tests, never inside a worker, a client or a session.
  it.each([
    ['worker/main.ts', "import { startFakeModel } from '../testing';\nexport const start = startFakeModel;\n"],
    ['client/sessions.ts', "import type { FakeModel } from '../testing/fake-model';\nexport type Model = FakeModel;\n"],
    ['activities/llm/activity.ts', "export const load = () => import('../../testing/scripted-llm/server');\n"],
    ['workflows/turn.ts', "import type { FakeReply } from '../testing/fake-model';\nexport type Reply = FakeReply;\n"],
    ['contracts/api.ts', "import { text } from '../testing/fake-model';\nexport const answer = text;\n"],
    ['index.ts', "export { startFakeModel } from './testing';\n"],
  ])('refuses in %s the fake model: %s', async (filePath, code) => {
    expect((await problems(filePath, code)).join('\n')).toMatch(/Product code does not import testing\//);
  }, 60_000);

  it.each([
    ['client/sessions.ts', "import type { agentSession } from '../workflows/session';\nexport type Session = typeof agentSession;\n"],
    ['workflows/turn.ts', "import type { LlmActivities } from '../contracts/llm-call';\nexport type Llm = LlmActivities;\n"],
    ['workflows/turn.ts', "import type { ClientEnv } from '../client/config';\nexport type Env = ClientEnv;\n"],
    ['activities/llm/session-log-cache.ts', "import type { InjectedSinks } from '@temporalio/worker';\nexport type Injected = InjectedSinks<never>;\n"],
    ['activities/mcp/connections.ts', "import type { McpConfig } from '../../config/mcp-config';\nexport type Config = McpConfig;\n"],
    ['client/sessions.ts', "import { clientTracingOptions } from '../tracing/tracing-client';\nexport const tracing = clientTracingOptions;\n"],
    ['worker/main.ts', "import { createActivities } from '../activities';\nexport const create = createActivities;\n"],
    ['testing/run-agent-test.ts', "import { createAgentWorker } from '../worker/create-worker';\nexport const create = createAgentWorker;\n"],
    ['gateway/app.ts', "import type { agentSession } from '../workflows/session';\nimport { connectClient } from '../client/sessions';\nexport type Session = typeof agentSession;\nexport const connect = connectClient;\n"],
  ])('allows in %s: %s', async (filePath, code) => {
    expect(await problems(filePath, code)).toEqual([]);
  }, 60_000);
});
