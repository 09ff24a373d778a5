/**
 * The replay test (replay.test.ts) is only worth something if it fails when it should. This
 * file proves it does: it replays a golden history against deliberately altered copies of
 * workflows/ and expects Temporal's determinism error, the one a change of command order
 * without `patched()` produces in production when a worker replays a running session.
 *
 * The copies live inside the project (`.data/altered-workflows-*`), so their imports of
 * `zod` and `@temporalio/workflow` resolve from the project's node_modules like the originals.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../scripts/temporal-binaries';
import { GOLDEN_SHAPES } from './support/golden-shapes';

const WORKFLOWS = path.join(PROJECT_ROOT, 'workflows');
const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'histories');
const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

// The determinism errors below are expected: keep core's WARN line about each one out of the report.
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } } });

/** One source edit: `find` must occur exactly once, so an alteration that no longer applies fails loudly instead of testing nothing. */
interface Edit {
  file: string;
  find: string;
  replace: string;
}

const copies: string[] = [];
afterAll(async () => {
  await Promise.all(copies.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function alteredCopy(edits: readonly Edit[]): Promise<string> {
  const dir = path.join(PROJECT_ROOT, '.data', `altered-workflows-${randomUUID()}`);
  copies.push(dir);
  await mkdir(path.dirname(dir), { recursive: true });
  await cp(WORKFLOWS, dir, { recursive: true });
  for (const edit of edits) {
    const file = path.join(dir, edit.file);
    const source = await readFile(file, 'utf8');
    const occurrences = source.split(edit.find).length - 1;
    if (occurrences !== 1) {
      throw new Error(`the alteration of ${edit.file} no longer applies: expected its text once, found it ${occurrences} times. Update this test to the new source.`);
    }
    await writeFile(file, source.replace(edit.find, edit.replace));
  }
  return dir;
}

/** One bundle per altered copy: bundling takes seconds, replaying a history milliseconds. */
const bundles = new Map<readonly Edit[], ReturnType<typeof bundleWorkflowCode>>();
function bundleOf(edits: readonly Edit[]) {
  let bundle = bundles.get(edits);
  if (!bundle) {
    bundle = alteredCopy(edits).then((dir) => bundleWorkflowCode({ workflowsPath: path.join(dir, 'index.ts'), logger: quietLogger }));
    bundles.set(edits, bundle);
  }
  return bundle;
}

/** The replay's error, or undefined when it replayed cleanly. */
async function replay(edits: readonly Edit[], shape: string): Promise<unknown> {
  const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES, `${shape}.json`), 'utf8')));
  return Worker.runReplayHistory({ workflowBundle: await bundleOf(edits) }, history, `replay-bites-${shape}`).then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** The recorded step: search attributes (status, step count) upserted, then the LLM activity scheduled. */
const UPSERT_AFTER_SCHEDULING: Edit[] = [
  {
    file: 'session.ts',
    find: `        state.step = event.step;
        publishStatus();`,
    replace: `        state.step = event.step;`,
  },
  {
    file: 'session.ts',
    find: `      return llm.callLlm.executeWithOptions(`,
    replace: `      const scheduled = llm.callLlm.executeWithOptions(`,
  },
  {
    file: 'session.ts',
    find: `logDigest: log.digest, retryPolicy: livePolicy() }],
      );`,
    replace: `logDigest: log.digest, retryPolicy: livePolicy() }],
      );
      publishStatus();
      return scheduled;`,
  },
];

/** A timer before anything else: the recording starts with search-attribute upserts. */
const TIMER_FIRST: Edit[] = [
  {
    file: 'session.ts',
    find: `export async function agentSession(input: SessionInput): Promise<SessionResult> {`,
    replace: `export async function agentSession(input: SessionInput): Promise<SessionResult> {
  await sleep(1);`,
  },
  { file: 'session.ts', find: `  setHandler,\n`, replace: `  setHandler,\n  sleep,\n` },
];

const UNALTERED: Edit[] = [];

describe('the replay test bites: a change of command order without patched() fails replay of every recorded shape', () => {
  it.each(GOLDEN_SHAPES)('replays %s against an unaltered copy of workflows/ (the copy itself changes nothing)', async (shape) => {
    expect(await replay(UNALTERED, shape)).toBeUndefined();
  });

  describe.each([
    ['upserting search attributes after scheduling the LLM activity instead of before', UPSERT_AFTER_SCHEDULING],
    ['starting a timer before the first search-attribute upsert', TIMER_FIRST],
  ])('%s', (_name, edits) => {
    it.each(GOLDEN_SHAPES)('fails %s with a DeterminismViolationError', async (shape) => {
      const error = await replay(edits, shape);
      expect(error).toBeInstanceOf(DeterminismViolationError);
      expect((error as Error).message).toMatch(/nondetermin/i);
    });
  });
});
