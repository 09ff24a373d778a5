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
 * The step recorded before the `status-per-turn` patch: search attributes (status, step count)
 * upserted, then the LLM activity scheduled; after it, no upsert at all. The alteration
 * schedules a step's call first and upserts after it, which breaks both. It anchors on the
 * step call alone, not on how the runtime builds the activity's input, so it survives a
 * change there that keeps the order.
 */
export const UPSERT_AFTER_SCHEDULING: Edit[] = [
  {
    file: 'session-runtime.ts',
    find: `      state.step = event.step;
      // The status and step count go to visibility when a turn starts and ends: a write per
      // step cost the server a visibility task each. Sessions recorded before wrote them here too.
      if (!patched(STATUS_PER_TURN)) publishStatus(state);`,
    replace: `      state.step = event.step;`,
  },
  {
    file: 'session-runtime.ts',
    find: "const stepCall = (turn: number, step: number) => callLlm(`step ${step} · llm ${config.model}`, { turn, step, uptoSeq: log.nextSeq, logDigest: log.digest });",
    replace: `const stepCall = (turn: number, step: number) => {
    const scheduled = callLlm(\`step \${step} · llm \${config.model}\`, { turn, step, uptoSeq: log.nextSeq, logDigest: log.digest });
    publishStatus(state);
    return scheduled;
  };`,
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
  { file: 'session.ts', find: `  patched,\n`, replace: `  patched,\n  sleep,\n` },
];

/** The compaction moved after the step's LLM call: a compaction's patch marker is then met where no patched() asks for it. */
export const COMPACTION_AFTER_STEP: Edit[] = [
  {
    file: 'session-runtime.ts',
    find: `        await compactor.beforeStep(turn, step);
        try {
          return await stepCall(turn, step);`,
    replace: `        try {
          const answer = await stepCall(turn, step);
          await compactor.beforeStep(turn, step);
          return answer;`,
  },
];

/** `patched(id)` made to answer false where `find` calls it: the session takes the side recorded before the patch. */
function oldSideOf(file: string, find: string): Edit[] {
  return [{ file, find, replace: find.replace(/patched\(\w+\)/, 'false') }];
}

/**
 * Each patch, and a recorded session that took its new side: forced onto the old side, a
 * copy of workflows/ must fail that recording, so the new side is proven by a golden history
 * and not only by the end-to-end tests.
 */
export const PATCH_NEW_SIDES: { patch: string; shape: string; edits: Edit[] }[] = [
  { patch: 'max-steps-default-50', shape: 'eleven-steps-default-limit', edits: oldSideOf('session.ts', '!patched(MAX_STEPS_DEFAULT_RAISED)') },
  { patch: 'status-per-turn', shape: 'status-per-turn', edits: oldSideOf('session-runtime.ts', '!patched(STATUS_PER_TURN)') },
  { patch: 'call-position-keys', shape: 'approval-reused-call-id', edits: oldSideOf('call-position.ts', 'patched(CALL_POSITION_PATCH)') },
  { patch: 'context-compaction', shape: 'compaction', edits: oldSideOf('context-compactor.ts', '!patched(CONTEXT_COMPACTION_PATCH)') },
  { patch: 'compaction-activity-id', shape: 'compaction-answer-room', edits: oldSideOf('context-compactor.ts', 'patched(COMPACTION_ACTIVITY_ID_PATCH) ?') },
  { patch: 'compact-for-answer-room', shape: 'compaction-answer-room', edits: oldSideOf('context-compactor.ts', '&& patched(ROOM_FOR_ANSWER_PATCH)') },
  {
    patch: 'compaction-budget',
    shape: 'compaction-past-budget',
    edits: oldSideOf('context-compactor.ts', 'allows() && patched(COMPACTION_BUDGET_PATCH)) await'),
  },
  { patch: 'compaction-size-floor', shape: 'compaction-size-floor', edits: oldSideOf('context-compactor.ts', '&& patched(SIZE_FLOOR_PATCH)') },
  {
    patch: 'recheck-after-carry-compaction',
    shape: 'carry-compaction-recheck',
    edits: oldSideOf('session.ts', '&& patched(RECHECK_AFTER_CARRY_COMPACTION)'),
  },
  { patch: 'mcp-arguments-checked-by-worker', shape: 'mcp-invalid-arguments', edits: oldSideOf('tools/mcp-session.ts', 'if (patched(MCP_ARGUMENTS_CHECKED_BY_WORKER))') },
  { patch: 'approval-in-either-lane', shape: 'approval-read-only-named', edits: oldSideOf('tool-dispatch.ts', '|| patched(APPROVAL_IN_EITHER_LANE)') },
];
