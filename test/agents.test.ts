import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnknownAgentError } from '../client/agents';
import { forkSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import { defineAgent } from '../contracts/agents/agent-definition';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { blocksRunBy, DocLines } from './support/doc-blocks';
import { eventually } from './support/eventually';

const TAG = Date.now();
const model = `agents-${TAG}`;
const support = defineAgent({
  name: 'support',
  description: 'answers customers',
  model: `anthropic:${model}`,
  system: 'You help customers.',
  tools: ['calculator', 'write_file'],
  settings: { maxSteps: 4, maxTokens: 1_000, approvalRequired: ['write_file'] },
});
const triage = defineAgent({ name: 'triage', model: 'openai:gpt-4o-mini', tools: ['http_request'] });

const h = useAgentHarness({ agents: [support, triage] });
const env = () => clientEnvOf(h());
const cli = (...args: string[]) => runEntry('client/main.ts', args, env());

describe('an agent started by name', () => {
  it('runs with the agent’s settings under the ones the session gives', async () => {
    h().llm.script(model, { kind: 'text', text: 'Happy to help.' });
    const session = await startSession(h().client, h().env, { agent: 'support', maxSteps: 2 });
    const state = await session.query(stateQuery);
    expect(state).toMatchObject({ model: `anthropic:${model}`, system: 'You help customers.', agent: { name: 'support' } });
    expect(state.settings).toMatchObject({ maxSteps: 2, maxTokens: 1_000, tools: ['calculator', 'write_file'], approvalRequired: ['write_file'] });

    expect((await sendAndWait(session, 'hello')).status).toBe('completed');
    const [request] = h().llm.requests({ model });
    expect(JSON.stringify(request?.body)).toContain('You help customers.');
  });

  it('is refused at once, naming the agents the worker serves, and starts nothing', async () => {
    const refused = startSession(h().client, h().env, { agent: 'sales', workflowId: `sales-${TAG}` });
    await expect(refused).rejects.toThrow(UnknownAgentError);
    await expect(refused).rejects.toThrow(`unknown agent "sales": the worker of task queue ${h().taskQueue} does not serve it; it serves support, triage`);
    await expect(h().client.workflow.getHandle(`sales-${TAG}`).describe()).rejects.toThrow(/not found/i);
  });

  it('keeps its agent when it continues as new and in a fork', async () => {
    // A tool call makes the turn's history pass 20 events, so the session continues as new after it.
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_agents1', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42' });
    const session = await startSession(h().client, h().env, { agent: 'support', continueAsNewAfterEvents: 20, maxSteps: 3 });
    expect((await sendAndWait(session, 'first')).status).toBe('completed');
    await eventually('the session to continue as new', async () => ((await h().client.workflow.getHandle(session.workflowId).describe()).runId !== session.firstExecutionRunId ? true : undefined), 30_000);
    const continued = await session.query(stateQuery);
    expect(continued).toMatchObject({ runs: 2, system: 'You help customers.', agent: { name: 'support' } });
    expect(continued.settings).toMatchObject({ maxSteps: 3, maxTokens: 1_000 });

    const fork = await forkSession(h().client, h().env, session.workflowId);
    const forked = await fork.query(stateQuery);
    expect(forked).toMatchObject({ model: `anthropic:${model}`, system: 'You help customers.', agent: { name: 'support' } });
    expect(forked.settings).toMatchObject({ maxSteps: 3, maxTokens: 1_000 });
    expect((await readLog(fork)).some((e) => e.type === 'turn/end')).toBe(true);
  });
});

describe('the CLI, as docs/agents.md runs it', () => {
  /** A documented `npm run client -- …` line, run as the client's command with `<id>` made this id. */
  const documented = (lines: DocLines, pattern: RegExp, id = '') => {
    const { argv } = lines.take(pattern);
    expect(argv.slice(0, 4)).toEqual(['npm', 'run', 'client', '--']);
    return cli(...argv.slice(4).map((word) => (word === '<id>' ? id : word)));
  };
  let lines: DocLines;
  beforeAll(async () => {
    lines = new DocLines(await blocksRunBy('test/agents.test.ts'));
  });
  afterAll(() => {
    expect(lines.untaken()).toEqual([]);
  });

  it('lists the agents with their tools and lanes', async () => {
    const listed = await documented(lines, /-- agents$/);
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toContain(`support anthropic:${model} · answers customers`);
    expect(listed.stdout).toContain('tools calculator (read_only), write_file (side_effecting)');
    expect(listed.stdout).toContain('tools http_request (by_input)');
    const json = JSON.parse((await documented(lines, /-- agents --json$/)).stdout) as { name: string }[];
    expect(json.map((agent) => agent.name)).toEqual(['support', 'triage']);
  });

  it('starts an agent with a flag winning, shows its name, and refuses an unknown one', async () => {
    const started = await documented(lines, /-- start --agent support/);
    expect(started.code).toBe(0);
    const { workflowId } = JSON.parse(started.stdout) as { workflowId: string };
    const shown = await documented(lines, /-- show <id>$/, workflowId);
    expect(shown.stdout).toMatch(/agent\s+support/);
    expect(shown.stdout).toContain(`anthropic:${model}`);
    expect(shown.stdout).toContain('maxSteps 2');
    const unknown = await documented(lines, /-- start --agent sales$/);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain(`unknown agent "sales": the worker of task queue ${h().taskQueue} does not serve it; it serves support, triage`);
  });
});
