/**
 * Every workflow shape with a golden history in test/fixtures/histories/ (recorded by
 * `npm run record-histories`): the replay test requires each one, and the replay-bites
 * test shows a reordering fails on each one.
 */
export const GOLDEN_SHAPES = [
  'normal-turn',
  'retries',
  'llm-failed',
  'retry-cancelled',
  'retry-policy-mid-call',
  'compensated-turn',
  'cancelled-turn',
  'cancelled-unknown',
  'approval',
  'approval-denied',
  'approval-timed-out',
  'approval-reused-call-id',
  'idle-timeout',
  'fork',
  'continue-as-new',
  'mcp-tools',
  'compaction',
  'compacted-continued',
  'status-per-turn',
  'compaction-answer-room',
  'compaction-past-budget',
  'carry-compaction-recheck',
  'update-beside-tool-result',
  'compaction-size-floor',
  'mcp-invalid-arguments',
  'approval-read-only-named',
  'eleven-steps-default-limit',
  'repaired-turn',
  'sub-agent',
  'sub-agent-child',
  'handoff',
  'revision-2-turns',
] as const;

/** The shapes whose recording compacts: a change to when compaction runs must fail their replay, and only theirs. */
export const COMPACTING_SHAPES = ['compaction', 'compacted-continued', 'compaction-answer-room', 'compaction-past-budget', 'compaction-size-floor'] as const satisfies readonly (typeof GOLDEN_SHAPES)[number][];
