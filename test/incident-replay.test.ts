/**
 * The "Turn an incident into a replay test" flow of docs/cli.md, exactly as written: a session's
 * history exported with `npm run client -- history <id> --out FILE`, replayed against the
 * current workflows, and against a copy whose commands were reordered without
 * `patched()`, which must fail with a determinism error.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, describe, expect, it } from 'vitest';
import { endSession, sendAndWait, startSession } from '../client/sessions';
import { workflowBundle } from '../harness/local-agent';
import { useAgentHarness, clientEnvOf } from './support/agent-harness';
import { alteredWorkflows, removeAlteredCopies, UPSERT_AFTER_SCHEDULING } from './support/altered-workflows';
import { runEntry } from './support/cli';
import { useTempDir } from './support/temp-dir';

const h = useAgentHarness();
const dir = useTempDir('incident-');
afterAll(async () => {
  await removeAlteredCopies();
});

async function replayAll(bundle: Awaited<ReturnType<typeof workflowBundle>>, files: string[]): Promise<ReplayResult[]> {
  const histories = await Promise.all(files.map(async (file) => ({ workflowId: path.basename(file, '.json'), history: historyFromJSON(JSON.parse(await readFile(file, 'utf8'))) })));
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
  return results;
}

describe('an incident becomes a replay test', () => {
  it('exports the history with `client history --out`, replays it cleanly, and fails on a reordering without patched()', async () => {
    const model = `incident-${Date.now()}`;
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_inc_1', name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: '42' });
    const session = await startSession(h().client, h().env, { model: `anthropic:${model}`, idleTimeoutMs: 60_000 });
    expect((await sendAndWait(session, 'compute')).status).toBe('completed');
    await endSession(session);
    await session.result();

    const file = path.join(dir(), `incident-${session.workflowId}.json`);
    const exported = await runEntry('client/main.ts', ['history', session.workflowId, '--out', file], clientEnvOf(h()));
    expect(exported.code, exported.stderr).toBe(0);

    const clean = await replayAll(await workflowBundle(), [file]);
    expect(clean.map((r) => r.error)).toEqual([undefined]);

    const reordered = await bundleWorkflowCode({ workflowsPath: path.join(await alteredWorkflows(UPSERT_AFTER_SCHEDULING), 'index.ts'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } });
    const [broken] = await replayAll(reordered, [file]);
    expect(broken?.error).toBeInstanceOf(DeterminismViolationError);
  }, 120_000);
});
