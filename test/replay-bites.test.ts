/**
 * The replay test (replay.test.ts) is only worth something if it fails when it should. This
 * file proves it does: it replays a golden history against deliberately altered copies of
 * workflows/ and expects Temporal's determinism error, the one a change of command order
 * without `patched()` produces in production when a worker replays a running session.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, describe, expect, it } from 'vitest';
import { alteredWorkflows, COMPACTION_AFTER_STEP, OUTPUT_UNCHECKED, removeAlteredCopies, TIMER_FIRST, UPSERT_AFTER_SCHEDULING, type Edit } from './support/altered-workflows';
import { COMPACTING_SHAPES, GOLDEN_SHAPES } from './support/golden-shapes';

const HISTORIES = path.join(import.meta.dirname, 'fixtures', 'histories');
const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

// The determinism errors below are expected: keep core's WARN line about each one out of the report.
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } } });

/** One bundle per altered copy: bundling takes seconds, replaying a history milliseconds. */
const bundles = new Map<readonly Edit[], ReturnType<typeof bundleWorkflowCode>>();
function bundleOf(edits: readonly Edit[]) {
  let bundle = bundles.get(edits);
  if (!bundle) {
    bundle = alteredWorkflows(edits).then((dir) => bundleWorkflowCode({ workflowsPath: path.join(dir, 'index.ts'), logger: quietLogger }));
    bundles.set(edits, bundle);
  }
  return bundle;
}

/** The replay's error, or undefined when it replayed cleanly. */
async function replay(edits: readonly Edit[], shape: string): Promise<unknown> {
  const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES, `${shape}.json`), 'utf8')));
  // Under its file's name, as it was recorded: a sub-agent's child id is derived from its parent's.
  return Worker.runReplayHistory({ workflowBundle: await bundleOf(edits) }, history, shape).then(
    () => undefined,
    (error: unknown) => error,
  );
}

afterAll(removeAlteredCopies);

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

describe('the replay test bites on compaction: moving the compaction call after the step\'s LLM call', () => {
  it.each(COMPACTING_SHAPES)('fails %s with a DeterminismViolationError where the recording scheduled the compaction call, whose id names its cut', async (shape) => {
    const error = await replay(COMPACTION_AFTER_STEP, shape);
    expect(error).toBeInstanceOf(DeterminismViolationError);
    expect((error as Error).message).toMatch(/activity id of scheduled event 'compact-\d+'/i);
  });

  // The same alteration leaves every session that never compacted replaying: the change is
  // caught by the histories that exercise it, not by an unrelated shape.
  it.each(GOLDEN_SHAPES.filter((shape) => !(COMPACTING_SHAPES as readonly string[]).includes(shape)))('still replays %s, which never compacts', async (shape) => {
    expect(await replay(COMPACTION_AFTER_STEP, shape)).toBeUndefined();
  });
});

/** A sub-agent's child id not derived from its call: a replay would start (or look for) another child than the one the recording started. */
const CHILD_ID_NOT_POSITIONAL: Edit[] = [
  {
    file: 'sub-agents.ts',
    find: '    const childId = this.#childWorkflowId(agent, { turn, step, callId: call.id });\n',
    replace: '    const childId = `${workflowId}/agent/${agent}/${uuid4()}`;\n',
  },
  { file: 'sub-agents.ts', find: 'startChild, type ChildWorkflowHandle }', replace: 'startChild, uuid4, type ChildWorkflowHandle }' },
];

describe('the replay test bites on sub-agents: a child id that is not derived from its call', () => {
  it('fails sub-agent with a DeterminismViolationError where the recording started the child under its positional id', async () => {
    const error = await replay(CHILD_ID_NOT_POSITIONAL, 'sub-agent');
    expect(error).toBeInstanceOf(DeterminismViolationError);
    expect((error as Error).message).toMatch(/nondetermin/i);
  });

  // A session that never calls a sub-agent never meets the change.
  it('still replays normal-turn, which calls none', async () => {
    expect(await replay(CHILD_ID_NOT_POSITIONAL, 'normal-turn')).toBeUndefined();
  });
});

/** A handoff's session id not derived from its call: a replay would start another session than the one the conversation went to. */
const HANDOFF_ID_NOT_POSITIONAL: Edit[] = [
  { file: 'handoff.ts', find: '      workflowId,\n      parentClosePolicy: ParentClosePolicy.ABANDON,', replace: '      workflowId: `${workflowId}-${uuid4()}`,\n      parentClosePolicy: ParentClosePolicy.ABANDON,' },
  { file: 'handoff.ts', find: 'ParentClosePolicy, startChild }', replace: 'ParentClosePolicy, startChild, uuid4 }' },
];

describe('the replay test bites on handoffs: a handed-over session id that is not derived from its call', () => {
  it('fails handoff with a DeterminismViolationError where the recording started the session it handed over to', async () => {
    const error = await replay(HANDOFF_ID_NOT_POSITIONAL, 'handoff');
    expect(error).toBeInstanceOf(DeterminismViolationError);
    expect((error as Error).message).toMatch(/nondetermin/i);
  });

  // A session that never hands over never meets the change; nor does one that calls a sub-agent.
  it.each(['normal-turn', 'sub-agent'])('still replays %s, which hands nothing over', async (shape) => {
    expect(await replay(HANDOFF_ID_NOT_POSITIONAL, shape)).toBeUndefined();
  });
});

describe('the replay test bites on structured output: taking the first answer without validating it', () => {
  it('fails repaired-turn with a DeterminismViolationError where the recording scheduled the repair step\'s LLM call', async () => {
    const error = await replay(OUTPUT_UNCHECKED, 'repaired-turn');
    expect(error).toBeInstanceOf(DeterminismViolationError);
    expect((error as Error).message).toMatch(/nondetermin/i);
  });

  // Only a session with an output schema meets the change: one without is judged by nothing.
  it('still replays normal-turn, which has no output schema', async () => {
    expect(await replay(OUTPUT_UNCHECKED, 'normal-turn')).toBeUndefined();
  });
});
