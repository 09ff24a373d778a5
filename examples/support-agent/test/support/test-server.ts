import { TestWorkflowEnvironment } from '@temporalio/testing';
import { quietLogs } from './quiet-logs.js';

/** The search attributes an agent session writes, which a namespace must know before it starts one (docs/operations.md of durable-agent-worker). */
const AGENT_SEARCH_ATTRIBUTES = ['AgentStatus=Keyword', 'AgentStepCount=Int', 'AgentModel=Keyword', 'AgentCostUsd=Double'];

/**
 * A Temporal dev server of the test's own. The SDK downloads the Temporal CLI it runs; a
 * machine that has one (or cannot download, as CI) names it in TEMPORAL_CLI_PATH.
 */
export function startTestServer(): Promise<TestWorkflowEnvironment> {
  quietLogs();
  const cli = process.env.TEMPORAL_CLI_PATH;
  return TestWorkflowEnvironment.createLocal({
    server: {
      ...(cli ? { executable: { type: 'existing-path', path: cli } } : {}),
      extraArgs: AGENT_SEARCH_ATTRIBUTES.flatMap((attribute) => ['--search-attribute', attribute]),
    },
  });
}
