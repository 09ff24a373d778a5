/**
 * The deliberate breaks `npm run test:mutations` applies, one at a time, to a copy of the
 * tree. Each names the promise it breaks and the test files that must then fail. `find`
 * must occur exactly once in `file`: a break that no longer applies fails the check
 * loudly instead of proving nothing.
 */
export interface Mutation {
  name: string;
  /** What the break does, in the words of the promise it violates. */
  breaks: string;
  file: string;
  find: string;
  replace: string;
  /** The test files that must fail, relative to the project root. */
  killers: readonly string[];
  /** Narrows the run to the tests that matter (vitest `-t`), to keep the check short. */
  testNamePattern?: string;
}

export const MUTATIONS: readonly Mutation[] = [
  {
    name: 'drop-compensation',
    breaks: 'a step that fails after its assistant message closes without answering its calls',
    file: 'workflows/turn.ts',
    find: 'tracker?.recoveryResults() ?? []',
    replace: '[]',
    killers: ['test/ladder-departures.test.ts'],
    testNamePattern: 'before any call was dispatched',
  },
  {
    name: 'reverse-recovery-order',
    breaks: "recovery results are written against the assistant's call order",
    file: 'workflows/compensation.ts',
    find: 'for (const { id, name } of this.#calls) {',
    replace: 'for (const { id, name } of [...this.#calls].reverse()) {',
    killers: ['test/compensation.test.ts'],
  },
  {
    name: 'not-started-for-recorded-call',
    breaks: 'a recorded call (which may have run) is answered TOOL_NOT_STARTED',
    file: 'workflows/compensation.ts',
    find: 'this.#recorded.has(id)\n',
    replace: 'false\n',
    killers: ['test/compensation.test.ts'],
  },
  {
    name: 'retry-non-retryable',
    breaks: 'a bad key or a bad request is retried',
    file: 'activities/llm/backoff.ts',
    find: "  if (!error.retryable) return { retry: false, reason: 'not_retryable' };\n",
    replace: '',
    killers: ['test/llm-backoff.test.ts'],
  },
  {
    name: 'ignore-retry-after',
    breaks: 'a server-stated wait is not a floor',
    file: 'activities/llm/backoff.ts',
    find: 'serverWaitMs ?? 0',
    replace: '0',
    killers: ['test/llm-backoff.test.ts'],
  },
  {
    name: 'drop-jitter',
    breaks: 'every wait is the full rung: a fleet retries in lockstep',
    file: 'activities/llm/backoff.ts',
    find: 'return base / 2 + clamp01(random()) * (base / 2);',
    replace: 'return base;',
    killers: ['test/llm-backoff.test.ts'],
  },
  {
    name: 'budget-from-first-attempt',
    breaks: 'the 240 s budget is measured from when the call was scheduled, not from its first failure',
    file: 'activities/llm/activity.ts',
    find: 'beat.firstFailureAt ??= failedAt;',
    replace: 'beat.firstFailureAt ??= ctx.info.scheduledTimestampMs;',
    killers: ['test/ladder-departures.test.ts'],
    testNamePattern: 'the retry budget',
  },
  {
    name: 'first-failure-not-carried',
    breaks: "the first failure's time is not carried between attempts (a retry falls back to the schedule time)",
    file: 'activities/llm/activity.ts',
    find: "  if (typeof prior?.firstFailureAt === 'number') return { firstFailureAt: prior.firstFailureAt };\n",
    replace: '',
    killers: ['test/ladder-departures.test.ts'],
    testNamePattern: 'the retry budget',
  },
  {
    name: 'dispatch-after-failure',
    breaks: 'a call is dispatched after another call of the step failed',
    file: 'workflows/scheduler.ts',
    find: `      while (inFlight.size >= hooks.concurrency) await Promise.race(inFlight);\n      if (stopped()) break;\n`,
    replace: `      while (inFlight.size >= hooks.concurrency) await Promise.race(inFlight);\n`,
    killers: ['test/scheduler-drain.test.ts'],
  },
  {
    name: 'skip-drain',
    breaks: 'the scheduler rejects while calls it started are still running',
    file: 'workflows/scheduler.ts',
    find: '  await drain();\n  if (failure) throw failure.error;\n}',
    replace: '  if (failure) throw failure.error;\n}',
    killers: ['test/scheduler-drain.test.ts'],
  },
  {
    name: 'record-failure-escapes-drain',
    breaks: 'a result that cannot be recorded rejects the drain at once, while other started calls still run (the scheduler as it was)',
    file: 'workflows/scheduler.ts',
    find: '      .then((outcome) => hooks.recordResult(call, outcome))\n      .catch(fail)\n',
    replace: '      .then((outcome) => hooks.recordResult(call, outcome), fail)\n',
    killers: ['test/scheduler-drain.test.ts'],
  },
  {
    name: 'leak-api-key',
    breaks: "the provider's API key is written into workflow history (the LLM activity's failure details)",
    file: 'activities/llm/activity.ts',
    find: '        const details: LlmFailureDetails = {\n          provider,\n',
    replace: '        const details: LlmFailureDetails = {\n          provider: `${provider} ${endpoint.apiKey}`,\n',
    killers: ['test/secrets.test.ts'],
  },
  {
    name: 'retries-back-after-continue-as-new',
    breaks: 'a session that switched retries off retries again after it continued as new',
    file: 'workflows/session.ts',
    find: `config.continued\n    ? config.continued.retryPolicy\n    : config.retryPolicy === undefined\n      ? 'default'\n      : config.retryPolicy;`,
    replace: `config.continued?.retryPolicy ?? (config.retryPolicy === undefined ? 'default' : config.retryPolicy);`,
    killers: ['test/ladder-departures.test.ts'],
    testNamePattern: 'continues as new',
  },
  {
    name: 'cancel-after-policy-query-ignored',
    breaks: 'a cancel that arrives while the activity asks for the live policy is reported as a retryable provider failure',
    file: 'activities/llm/activity.ts',
    find: "        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the LLM call was cancelled');\n        const decision",
    replace: '        const decision',
    killers: ['test/llm-activity-failures.test.ts'],
  },
  {
    name: 'unclassified-failure-passed-through',
    breaks: 'a failure that is not a provider error goes to Temporal unclassified (retried without the ladder)',
    file: 'activities/llm/activity.ts',
    find: 'if (!LlmError.is(error)) throw unclassified(error, provider);',
    replace: 'if (!LlmError.is(error)) throw error;',
    killers: ['test/llm-activity-failures.test.ts'],
  },
  {
    name: 'attempts-capped-at-scheduling',
    breaks: 'a policy raised while a call runs is capped by the attempts fixed when it was scheduled',
    file: 'workflows/retry-policy.ts',
    find: '    maximumAttempts: RETRY_LIMITS.maxRetries.max + 1,',
    replace: '    maximumAttempts: policy === null ? 1 : policy.maxRetries + 1,',
    killers: ['test/ladder-departures.test.ts'],
    testNamePattern: 'off to default',
  },
  {
    name: 'lost-attempt-not-admitted',
    breaks: "a retry after a lost attempt (worker gone, heartbeat timeout) goes out on Temporal's fallback policy, ignoring the live policy and the budget",
    file: 'activities/llm/activity.ts',
    find: '        if (attempt > 1 && prior?.failedAttempt !== attempt - 1) await admitRetryOfLostAttempt(ctx, input, beat, now());\n',
    replace: '',
    killers: ['test/llm-activity-failures.test.ts', 'test/ladder-departures.test.ts'],
    testNamePattern: 'lost attempt',
  },
  {
    name: 'no-wait-cap',
    breaks: 'rungs above 16 s keep doubling instead of staying at the 30 s cap',
    file: 'activities/llm/backoff.ts',
    find: 'Math.min(policy.baseDelayMs * 2 ** Math.max(0, retry - 1), policy.maxDelayMs)',
    replace: 'policy.baseDelayMs * 2 ** Math.max(0, retry - 1)',
    killers: ['test/ladder-time-skipping.test.ts'],
    testNamePattern: 'rung',
  },
  {
    name: 'budget-on-worker-clock',
    breaks: "the budget is measured on the worker's clock, not the server's that times the waits",
    file: 'activities/llm/activity.ts',
    find: '  return () => dueAt + (Date.now() - startedAt);',
    replace: '  return () => Date.now() + 0 * (dueAt - startedAt);',
    killers: ['test/ladder-time-skipping.test.ts'],
    testNamePattern: 'budget',
  },
  {
    name: 'drop-gemini-thought-signature',
    breaks: "a Gemini function call goes back without the thoughtSignature it came with (Gemini 3 refuses the request)",
    file: 'activities/llm/providers/gemini-parts.ts',
    find: '      parts.push({ ...call(ref.index), ...signature });',
    replace: '      parts.push({ ...call(ref.index) });',
    killers: ['test/provider-fidelity-sessions.test.ts'],
    testNamePattern: 'thoughtSignature',
  },
  {
    name: 'idle-clock-counts-consumer-time',
    breaks: 'the idle timer runs while the consumer works on a chunk, so a slow consumer looks like a silent server',
    file: 'activities/llm/http.ts',
    find: '        } finally {\n          disarm();\n        }\n',
    replace: '        } finally {\n          // disarm();\n        }\n',
    killers: ['test/llm-http.test.ts'],
    testNamePattern: 'consumer',
  },
  {
    name: 'tool-result-too-large-fails-turn',
    breaks: 'a tool result above 2 MiB fails the turn instead of becoming an error result the model reads',
    file: 'workflows/session.ts',
    find: '    if (!isPayloadsTooLarge(error)) throw error;\n',
    replace: '    throw error;\n',
    killers: ['test/bad-input.test.ts'],
    testNamePattern: 'error result the model reads',
  },
];
