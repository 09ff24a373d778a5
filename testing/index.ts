/**
 * `durable-agent-worker/testing` (docs/testing.md): what a user's own tests need to run
 * their agent without a provider: the fake model, scripted in a few lines, and a helper that
 * runs a session against it on the user's TestWorkflowEnvironment.
 */
export {
  json,
  overloaded,
  stall,
  startFakeModel,
  text,
  toolCall,
  toolCalls,
  truncated,
  type FakeModel,
  type FakeModelRequest,
  type FakeProviderEnv,
  type FakeReply,
  type FakeToolCall,
} from './fake-model';
export { runAgentTest, type AgentTestEnvironment, type AgentTestOptions, type AgentTestRun } from './run-agent-test';
