import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { useTempDir } from './support/temp-dir';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';

const TAG = Date.now();
/** Priced by the test's AGENT_PRICES_FILE: USD per million tokens. */
const PRICED = `anthropic:spend-priced-${TAG}`;
const FORKED = `openai:spend-forked-${TAG}`;

const dir = useTempDir('spend-');
const prices = () => path.join(dir(), 'prices.json');
beforeAll(async () => {
  await writeFile(prices(), JSON.stringify({ models: { [PRICED]: { input: 1, output: 2, cacheRead: 0.5 }, [FORKED]: { input: 1, output: 1 } } }));
});
const h = useAgentHarness(() => ({ env: { AGENT_PRICES_FILE: prices() } }));

/** The CLI's process, as a user starts it: for a few command lines, so the process around them stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);
const nameOf = (model: string) => model.slice(model.indexOf(':') + 1);

async function runJson(...args: string[]) {
  const result = await cli('run', '--json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** A calculator step of $0.10 (60k uncached + 40k cache-read input, 10k output) and an answer of $0.30. */
function scriptTwoPricedSteps(model: string): void {
  h().llm.script(
    nameOf(model),
    { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }], usage: { inputTokens: 100_000, outputTokens: 10_000, cacheReadTokens: 40_000 } },
    { kind: 'text', text: 'It is 42.', usage: { inputTokens: 200_000, outputTokens: 50_000 } },
  );
}

describe('spend per session', () => {
  it('records each call’s cost with its usage in the log, and totals it in run --json, the state Query, log, list and AgentCostUsd', async () => {
    scriptTwoPricedSteps(PRICED);
    const out = await runJson('--prompt', 'What is 6*7?', '--model', PRICED, '--keep');
    expect(out.status).toBe('completed');
    expect(out.usage).toMatchObject({ inputTokens: 300_000, outputTokens: 60_000, cacheReadTokens: 40_000 });
    expect(out.usage.costUsd).toBeCloseTo(0.4, 10);

    const log = await cli('log', out.workflowId, '--json');
    const costs = (JSON.parse(log.stdout) as { type: string; message?: { costUsd?: number } }[]).filter((e) => e.type === 'assistant').map((e) => e.message?.costUsd);
    expect(costs[0]).toBeCloseTo(0.1, 10);
    expect(costs[1]).toBeCloseTo(0.3, 10);
    const human = await cli('log', out.workflowId);
    expect(human.stdout).toMatch(/step 1 · assistant calls calculator · tokens in 100000 \(cache read 40000\) · out 10000 · \$0\.1000$/m);
    expect(human.stdout).toMatch(/step 2 · assistant: It is 42\. · tokens in 200000 · out 50000 · \$0\.3000$/m);

    const state = await handle(out.workflowId).query(stateQuery);
    expect(state.spend.costUsd).toBeCloseTo(0.4, 10);
    expect(state.spend).toMatchObject({ inputTokens: 300_000, outputTokens: 60_000 });

    const listed = await eventually('AgentCostUsd in list --json', async () => {
      const list = await cli('list', '--json');
      const row = (JSON.parse(list.stdout) as { workflowId: string; costUsd: number | null }[]).find((s) => s.workflowId === out.workflowId);
      return row?.costUsd === null ? undefined : row;
    });
    expect(listed.costUsd).toBeCloseTo(0.4, 10);
    const table = await cliProcess('list');
    expect(table.stdout).toMatch(/^ *SESSION +STATUS +MODEL +STEPS +COST +STARTED$/m);
    expect(table.stdout).toMatch(new RegExp(`^${out.workflowId} +idle +${PRICED} +2 +\\$0\\.4000 `, 'm'));
    await handle(out.workflowId).terminate('test cleanup');
  });

  it('costs a model without a price null, shown as unknown, never as 0', async () => {
    const model = `openai:spend-unpriced-${TAG}`;
    scriptTwoPricedSteps(model);
    const out = await runJson('--prompt', 'What is 6*7?', '--model', model, '--keep');
    expect(out.usage.costUsd).toBeNull();
    expect((await handle(out.workflowId).query(stateQuery)).spend.costUsd).toBeNull();
    expect((await cli('log', out.workflowId)).stdout).toMatch(/step 2 · assistant: It is 42\. · tokens in 200000 · out 50000 · cost unknown$/m);
    const table = await eventually('the session in list', async () => {
      const list = await cli('list');
      return list.stdout.includes(out.workflowId) ? list.stdout : undefined;
    });
    expect(table).toMatch(new RegExp(`^${out.workflowId} +idle +${model} +2 +- `, 'm'));
    await handle(out.workflowId).terminate('test cleanup');
  });

  it('a fork carries the whole spend of its source, also when cut before the spending', async () => {
    h().llm.script(nameOf(FORKED), { kind: 'text', text: 'first', usage: { inputTokens: 100_000, outputTokens: 0 } }, { kind: 'text', text: 'second', usage: { inputTokens: 200_000, outputTokens: 0 } });
    const out = await runJson('--prompt', 'one', '--model', FORKED, '--keep');
    const source = handle(out.workflowId);
    await source.executeUpdate('send', { args: [{ text: 'two' }] });
    expect((await source.query(stateQuery)).spend.costUsd).toBeCloseTo(0.3, 10);

    // Cut right after the first turn's start: none of the spending is in the fork's own events.
    const fork = await cli('fork', out.workflowId, '--at', '0', '--json');
    expect(fork.code, fork.stderr).toBe(0);
    const forked = handle(String(JSON.parse(fork.stdout).workflowId));
    const spend = (await forked.query(stateQuery)).spend;
    expect(spend.costUsd).toBeCloseTo(0.3, 10);
    expect(spend.inputTokens).toBe(300_000);
    await Promise.all([source.terminate('test cleanup'), forked.terminate('test cleanup')]);
  });
});
