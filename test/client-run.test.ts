import { describe, expect, it } from 'vitest';
import { stateQuery } from '../contracts/api';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { startOtlpEndpoint } from './support/otlp-endpoint';

const h = useAgentHarness();

const clientEnv = () => clientEnvOf(h());
/** `run` in the CLI's process, as a user starts it: each provider's session, the traced one and the unreachable server. */
const run = (args: string[], env: Record<string, string> = {}) => runEntry('client/main.ts', ['run', ...args], { ...clientEnv(), ...env });
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const runHere = (args: string[], env: Record<string, string> = {}) => runInProcess(['run', ...args], { ...clientEnv(), ...env });

describe('npm run client -- run', () => {
  it.each(['anthropic', 'openai', 'google'])(
    'runs a session end to end on %s: client → workflow → LLM activity → scripted LLM → tool → answer, as one JSON object',
    async (provider) => {
      const model = `skeleton-${provider}-${Date.now()}`;
      h().llm.script(
        model,
        { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] },
        { kind: 'text', text: 'It is 42.' },
      );
      const result = await run(['--prompt', 'what is 6*7?', '--model', `${provider}:${model}`, '--json']);
      expect(result.code).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const out = JSON.parse(lines[0] ?? '');
      expect(out).toMatchObject({ workflowId: expect.stringMatching(/^session-/), runId: expect.any(String), status: 'completed' });
      expect(out.failure).toBeUndefined();
      const [user, call, toolResult, answer] = out.messages;
      expect(user).toEqual({ role: 'user', text: 'what is 6*7?' });
      expect(call.toolCalls[0]).toMatchObject({ name: 'calculator', input: { expression: '6*7' } });
      expect(toolResult).toEqual({ role: 'tool', toolCallId: call.toolCalls[0].id, name: 'calculator', code: 'ok', content: '42' });
      expect(answer).toMatchObject({ role: 'assistant', text: 'It is 42.' });
      expect(out.usage.outputTokens).toBeGreaterThan(0);
      expect(h().llm.requests({ model }).map((r) => r.provider)).toEqual([provider, provider]);
      // `run` ends the session after the turn.
      await expect(h().client.workflow.getHandle(out.workflowId).result()).resolves.toMatchObject({ turns: 1, endedBy: 'request' });
    },
  );

  it('sends the prompt with the start, in one request: the session accepts it in its first workflow task', async () => {
    const model = `echo-with-start-${Date.now()}`;
    const endpoint = await startOtlpEndpoint();
    let result;
    try {
      result = await run(['--prompt', 'at once', '--model', `anthropic:${model}`, '--json'], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    } finally {
      await endpoint.close();
    }
    // The client's own spans name its requests: one update-with-start, no start and no separate send.
    const requests = endpoint.spans.filter((s) => s.service === 'durable-agent-client').map((s) => s.name);
    expect(requests).toContain('UpdateWithStartWorkflow:send');
    expect(requests).not.toContain('StartWorkflow:agentSession');
    expect(requests).not.toContain('StartWorkflowUpdate:send');
    const out = JSON.parse(result.stdout);
    const { events } = await h().client.workflow.getHandle(out.workflowId).fetchHistory();
    const accepted = (events ?? []).findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    const tasksBefore = (events ?? []).slice(0, accepted).filter((e) => e.workflowTaskCompletedEventAttributes);
    expect(accepted).toBeGreaterThan(0);
    expect(tasksBefore).toHaveLength(1);
  });

  it('refuses an id that a running session already has, in one line, and leaves that session alone', async () => {
    const model = `echo-taken-${Date.now()}`;
    const first = JSON.parse((await runHere(['--prompt', 'first', '--model', `openai:${model}`, '--json', '--keep'])).stdout);
    const again = await runHere(['--prompt', 'second', '--model', `openai:${model}`, '--id', first.workflowId, '--json']);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`client: a session with id "${first.workflowId}" already exists; pick another --id`);
    const handle = h().client.workflow.getHandle(first.workflowId);
    expect(await handle.query(stateQuery)).toMatchObject({ status: 'idle', turn: 1, queued: 0 });
    await handle.terminate('test cleanup');
  });

  it('reports a failed turn as status failed with its type, and still exits 0', async () => {
    const model = `skeleton-auth-${Date.now()}`;
    h().llm.script(model, { kind: 'status', status: 401 });
    const result = await runHere(['--prompt', 'hi', '--model', `anthropic:${model}`, '--json']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.status).toBe('failed');
    expect(out.failure).toMatchObject({ type: 'auth_error', message: expect.stringContaining('401') });
    expect(h().llm.requests({ model })).toHaveLength(1);
  });

  it('keeps the session open with --keep', async () => {
    const model = `echo-keep-${Date.now()}`;
    const result = await runHere(['--prompt', 'hold on', '--model', `openai:${model}`, '--json', '--keep']);
    const out = JSON.parse(result.stdout);
    expect(out.messages.at(-1)).toMatchObject({ role: 'assistant', text: expect.stringContaining('hold on') });
    const handle = h().client.workflow.getHandle(out.workflowId);
    expect(await handle.query(stateQuery)).toMatchObject({ status: 'idle' });
    await handle.terminate('test cleanup');
  });

  it('prints the conversation and the UI link without --json', async () => {
    const model = `echo-human-${Date.now()}`;
    const result = await runHere(['--prompt', 'hello there', '--model', `anthropic:${model}`], { TEMPORAL_UI_URL: 'http://ui.example:8233' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('you: hello there');
    expect(result.stdout).toMatch(/UI http:\/\/ui\.example:8233\/namespaces\/default\/workflows\/session-[^/]+\/[^/]+\/history/);
  });

  it('refuses a bad model string with one line and a non-zero exit, before contacting anything', async () => {
    const result = await runHere(['--prompt', 'hi', '--model', 'mistral:large', '--json'], { TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/model/);
  });

  it('says in one line when the Temporal server cannot be reached', async () => {
    const result = await run(['--prompt', 'hi', '--model', 'anthropic:echo', '--json'], { TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/cannot reach the Temporal server at localhost:1/);
  });
});
