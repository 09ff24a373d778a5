import { describe, expect, it } from 'vitest';
import { readLog, sendAndWait } from '../client/sessions';
import { stateQuery } from '../contracts/api';
import type { agentSession } from '../workflows/session';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { useTempDir } from './support/temp-dir';
import { runEntry } from './support/cli';
import { timerSummaries } from './support/timer-summaries';

const workspace = useTempDir('turn-limits-');
const h = useAgentHarness(() => ({ env: { AGENT_WORKSPACE: workspace() } }));

const cli = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
const handle = (id: string) => h().client.workflow.getHandle<typeof agentSession>(id);
let models = 0;
const newModel = (name: string) => `limits-${name}-${++models}-${Date.now()}`;

async function start(model: string, ...flags: string[]): Promise<string> {
  const started = await cli('start', '--model', `anthropic:${model}`, '--json', ...flags);
  expect(started.code, started.stderr).toBe(0);
  return String(JSON.parse(started.stdout).workflowId);
}

describe('--turn-timeout', () => {
  it('cancels a turn that outlives it on a durable timer, answers its open calls, and fails it turn_timeout; the session goes on', async () => {
    const model = newModel('timeout');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }, { name: 'write_file', input: { path: 'out.txt', content: 'x' } }] },
      { kind: 'text', text: 'next turn answered' },
    );
    // The write waits for a human who never comes: only the turn's own limit can end it.
    const id = await start(model, '--turn-timeout', '2s', '--approve-tools', 'write_file');
    const started = Date.now();
    const outcome = await sendAndWait(handle(id), 'compute and write');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'turn_timeout', message: expect.stringContaining('2 s limit (--turn-timeout)') } });

    const log = await readLog(handle(id));
    const results = log.flatMap((e) => (e.type === 'tool/result' ? [[e.name, e.code]] : []));
    expect(results).toEqual([
      ['calculator', 'ok'],
      ['write_file', 'TOOL_NOT_STARTED'],
    ]);
    expect(log.find((e) => e.type === 'step/end')).toMatchObject({ status: 'failed', failure: { type: 'turn_timeout' } });
    expect(log.find((e) => e.type === 'turn/end')).toMatchObject({ status: 'failed', failure: { type: 'turn_timeout' } });
    expect(await timerSummaries(handle(id))).toContain('turn timeout 2 s');
    expect((await handle(id).query(stateQuery)).settings).toMatchObject({ turnTimeoutMs: 2_000 });

    expect(await sendAndWait(handle(id), 'again')).toMatchObject({ status: 'completed' });
    await handle(id).terminate('test cleanup');
  });

  it('leaves a turn that ends in time alone, its timer cancelled', async () => {
    const model = newModel('in-time');
    h().llm.script(model, { kind: 'text', text: 'quick' });
    const id = await start(model, '--turn-timeout', '10m');
    expect(await sendAndWait(handle(id), 'hi')).toMatchObject({ status: 'completed' });
    const events = (await handle(id).fetchHistory()).events ?? [];
    const timer = events.find((e) => e.timerStartedEventAttributes && Buffer.from(e.userMetadata?.summary?.data ?? []).toString('utf8') === '"turn timeout 600 s"');
    const timerId = timer?.timerStartedEventAttributes?.timerId;
    expect(timerId).toBeDefined();
    expect(events.some((e) => e.timerCanceledEventAttributes?.timerId === timerId)).toBe(true);
    expect(events.some((e) => e.timerFiredEventAttributes?.timerId === timerId)).toBe(false);
    await handle(id).terminate('test cleanup');
  });
});

describe('--max-repeats', () => {
  it('answers the third identical call in a row with an error the model reads, instead of running it; a different call runs', async () => {
    const model = newModel('repeats');
    const same = { kind: 'tool_calls' as const, calls: [{ name: 'calculator', input: { expression: '1+1' } }] };
    h().llm.script(model, same, same, same, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '2+2' } }] }, { kind: 'text', text: 'done' });
    const id = await start(model, '--max-repeats', '2');
    expect(await sendAndWait(handle(id), 'loop')).toMatchObject({ status: 'completed' });
    const results = (await readLog(handle(id))).flatMap((e) => (e.type === 'tool/result' ? [{ code: e.code, content: e.content }] : []));
    expect(results.map((r) => r.code)).toEqual(['ok', 'ok', 'error', 'ok']);
    expect(results[2]?.content).toMatch(/^Not run: this is the same calculator call with the same arguments 2 times in a row, the most this session allows \(--max-repeats 2\)/);
    // The model was told: the refusal is in the request that followed it.
    expect(JSON.stringify(h().llm.requests({ model })[3]?.body)).toContain('--max-repeats 2');
    await handle(id).terminate('test cleanup');
  });
});

describe('turn limit refusals', () => {
  it.each([
    [['start', '--turn-timeout', 'soon'], 'client: --turn-timeout must be a duration from 1 s to 24 h, such as 90s, 10m or 1h, got "soon"'],
    [['start', '--turn-timeout', '25h'], 'client: --turn-timeout must be a duration from 1 s to 24 h, such as 90s, 10m or 1h, got "25h"'],
    [['start', '--max-repeats', '0'], 'client: --max-repeats must be a whole number from 1 to 100, got "0"'],
  ])('%j is refused in one line, exit 2', async (args, line) => {
    const result = await cli(...args);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(line);
  });
});
