/**
 * The "Turn an incident into a replay test" flow of docs/cli.md, its commands read from the
 * text and run as written: a session's history exported with `npm run client -- history
 * <id> --out FILE`, replayed against the current workflows as `npx vitest run
 * test/replay.test.ts` replays its folder, and against a copy whose commands were reordered
 * without `patched()`, which must fail with a determinism error.
 */
import { readdir, readFile } from 'node:fs/promises';
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
import { blocksRunBy, DocLines } from './support/doc-blocks';
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

    const lines = new DocLines(await blocksRunBy('test/incident-replay.test.ts'));
    const exportCommand = lines.take(/^npm run client -- history /).argv;
    expect(exportCommand.slice(0, 4)).toEqual(['npm', 'run', 'client', '--']);
    // The text's session id is this session's; its fixtures folder is the test's own, so the
    // replay suite running beside this file never reads a half-written history.
    const args = exportCommand.slice(4).map((word) => (word.endsWith('…') ? session.workflowId : word.replace(/^test\/fixtures\/histories\//, `${dir()}/`)));
    const exported = await runEntry('client/main.ts', args, clientEnvOf(h()));
    expect(exported.code, exported.stderr).toBe(0);

    lines.take(/^npx vitest run test\/replay\.test\.ts$/);
    const files = (await readdir(dir())).map((name) => path.join(dir(), name));
    expect(files).toHaveLength(1);
    const clean = await replayAll(await workflowBundle(), files);
    expect(clean.map((r) => r.error)).toEqual([undefined]);
    expect(lines.untaken()).toEqual([]);

    const reordered = await bundleWorkflowCode({ workflowsPath: path.join(await alteredWorkflows(UPSERT_AFTER_SCHEDULING), 'index.ts'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } });
    const [broken] = await replayAll(reordered, files);
    expect(broken?.error).toBeInstanceOf(DeterminismViolationError);
  }, 120_000);
});
