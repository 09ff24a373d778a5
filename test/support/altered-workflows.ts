/**
 * Deliberately altered copies of workflows/, for tests that prove a replay fails when the
 * workflow's commands change order without `patched()`.
 *
 * The copies live inside the project (`.data/altered-workflows-*`), so their imports of
 * `zod` and `@temporalio/workflow` resolve from the project's node_modules like the originals;
 * contracts/ is copied beside them, so their `../contracts/…` imports resolve too.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';

const WORKFLOWS = path.join(PROJECT_ROOT, 'workflows');
const CONTRACTS = path.join(PROJECT_ROOT, 'contracts');

/** One source edit: `find` must occur exactly once, so an alteration that no longer applies fails loudly instead of testing nothing. */
export interface Edit {
  file: string;
  find: string;
  replace: string;
}

const copies: string[] = [];
/** Call in `afterAll`. */
export async function removeAlteredCopies(): Promise<void> {
  await Promise.all(copies.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export async function alteredWorkflows(edits: readonly Edit[]): Promise<string> {
  const root = path.join(PROJECT_ROOT, '.data', `altered-workflows-${randomUUID()}`);
  copies.push(root);
  const dir = path.join(root, 'workflows');
  await mkdir(root, { recursive: true });
  await cp(WORKFLOWS, dir, { recursive: true });
  await cp(CONTRACTS, path.join(root, 'contracts'), { recursive: true });
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

/**
 * Search attributes (status, step count) upserted right after an LLM activity is scheduled,
 * a command the recording never issued there. It anchors on the one line that schedules
 * every LLM call (a step's and a compaction's), so every shape, also one whose only call is
 * a compaction, meets it.
 */
export const UPSERT_AFTER_SCHEDULING: Edit[] = [
  {
    file: 'session-run.ts',
    find: "import { ActivityCancellationType, proxyActivities, workflowInfo } from '@temporalio/workflow';",
    replace: "import { ActivityCancellationType, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';\nimport { AgentStepCount } from '../contracts/search-attributes';",
  },
  {
    file: 'session-run.ts',
    find: '    (call, options) => llm.callLlm.executeWithOptions({ ...options, retry: temporalRetryPolicyFor(call.retryPolicy, call.ladder?.attempts) }, [call]),',
    replace: `    (call, options) => {
      const scheduled = llm.callLlm.executeWithOptions({ ...options, retry: temporalRetryPolicyFor(call.retryPolicy, call.ladder?.attempts) }, [call]);
      // Upserted whatever it holds: from revision 2 publishStatus upserts nothing that has not changed.
      upsertSearchAttributes([{ key: AgentStepCount, value: this.state.stepsTaken }]);
      return scheduled;
    },`,
  },
];

/** A timer before anything else: the recording starts with search-attribute upserts. */
export const TIMER_FIRST: Edit[] = [
  {
    file: 'session.ts',
    find: `export async function agentSession(input: SessionInput): Promise<SessionResult> {`,
    replace: `export async function agentSession(input: SessionInput): Promise<SessionResult> {
  await sleep(1);`,
  },
  { file: 'session.ts', find: `condition, upsertSearchAttributes }`, replace: `condition, sleep, upsertSearchAttributes }` },
];

/** The compaction moved after the step's LLM call: the step's call is then scheduled where the recording has the compaction's (`compact-<cut>`). */
export const COMPACTION_AFTER_STEP: Edit[] = [
  { file: 'step.ts', find: 'listing.then(() => session.compactor.beforeStep(turn, step)) : session.compactor.beforeStep(turn, step);', replace: 'listing : undefined;' },
  {
    file: 'step.ts',
    find: '    const message = await callModel(session, turn, step);\n',
    replace: '    const message = await callModel(session, turn, step);\n    await session.compactor.beforeStep(turn, step);\n',
  },
];

/** A turn under an output schema that takes the model's first answer unchecked: the recording's repair step is never scheduled. */
export const OUTPUT_UNCHECKED: Edit[] = [{ file: 'turn.ts', find: "        if (!output) return { reason: 'answered' as const };\n", replace: "        return { reason: 'answered' as const };\n" }];
