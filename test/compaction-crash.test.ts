/**
 * A real worker PROCESS is killed with SIGKILL while a session's compaction call is in
 * flight (the scripted LLM holds it), then a new worker process takes over. The
 * compaction call is an LLM call like any other: its attempt is lost with the worker,
 * Temporal retries it when the heartbeat timeout passes (20 s), the turn completes, and
 * the log gets exactly one `context/compacted` and nothing half-written.
 *
 * One kill serves the three providers at once, as in crash.test.ts: the heartbeat timeout
 * is what the test waits for, and it would cost that much per kill.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowUpdateStage, type WorkflowUpdateHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, turnOutcomeOf, type SessionHandle, type TurnResult } from '../client/sessions';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { sendUpdate, type TurnOutcome } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';
import { TOOL_STEP_THEN_COMPACTED_ANSWER, turnShape } from './support/turn-shape';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const PROVIDERS = ['anthropic', 'openai', 'google'] as const;
type Provider = (typeof PROVIDERS)[number];

/**
 * Turn 1 reads a small file; turn 2 reads a 12 KiB one (about 3 100 tokens), so the
 * request of its second step passes compactAt × window (2 400 tokens) and compacts turn 1
 * away first; the request after the compaction (about 3 400 tokens) fits the window.
 */
const WINDOW = 6_000;
const COMPACT_AT = 0.4;
const SMALL = 'small.txt';
const BIG = 'big.txt';
const SUMMARY_LOST = 'A summary the killed worker never received.';
const SUMMARY = 'Turn 1 read small.txt, which says hello.';

interface Case {
  provider: Provider;
  model: string;
  session: SessionHandle;
  send: WorkflowUpdateHandle<TurnOutcome>;
  /** The log when the kill came: the compaction call in flight. */
  logAtKill: SessionEvent[];
  outcome?: TurnResult;
}

let llm: ScriptedLlm;
let client: Client;
let workspace: string;
const workers: WorkerProcess[] = [];
const cases = new Map<Provider, Case>();
let killedAt = 0;

const caseOf = (provider: Provider): Case => {
  const found = cases.get(provider);
  if (!found) throw new Error(`no session for ${provider}: the scenario in beforeAll did not get that far`);
  return found;
};

const readCall = (name: string) => ({ kind: 'tool_calls' as const, calls: [{ name: 'read_file', input: { path: name } }] });

beforeAll(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'compaction-crash-'));
  await writeFile(path.join(workspace, SMALL), 'hello from the small file\n');
  await writeFile(path.join(workspace, BIG), `${'a line of the big file, read in turn 2\n'.repeat(316)}`.slice(0, 12 * 1024));
  llm = await startScriptedLlm();
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  const taskQueue = uniqueTaskQueue('compaction-crash');
  const env = agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, workspace });
  workers.push(await startWorkerProcess('compaction-crash-before-kill', env));

  const run = randomUUID().slice(0, 8);
  await Promise.all(
    PROVIDERS.map(async (provider) => {
      const model = `compaction-crash-${provider}-${run}`;
      llm.setContextWindow(model, WINDOW);
      llm.script(model, readCall(SMALL), { kind: 'text', text: 'It says hello.' }, readCall(BIG), { kind: 'text', text: 'The big file is read.' });
      // The first compaction request is held until the kill cuts it; the retry gets the second reply.
      llm.scriptCompaction(model, { kind: 'text', text: SUMMARY_LOST, hold: true, holdTimeoutMs: 180_000 }, { kind: 'text', text: SUMMARY });
      const session = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, {
        model: `${provider}:${model}`,
        workflowId: `compaction-crash-${provider}-${run}`,
        tools: ['read_file'],
        contextWindow: WINDOW,
        compactAt: COMPACT_AT,
        idleTimeoutMs: 300_000,
      });
      expect(await sendAndWait(session, `please read ${SMALL}`)).toMatchObject({ status: 'completed', turn: 1 });
      const send = await session.startUpdate(sendUpdate, { args: [{ text: `now read ${BIG}` }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      await llm.waitForRequests(1, { model, purpose: 'compact' }, 60_000);
      // The compaction call is in flight, held before any byte of its answer: the log as the kill finds it.
      const logAtKill = await eventually(`${provider}: the log to reach the held compaction`, async () => {
        const events = await readLog(session);
        return events.some((e) => e.type === 'step/start' && e.turn === 2 && e.step === 2) ? events : undefined;
      }, 10_000);
      cases.set(provider, { provider, model, session, send, logAtKill });
    }),
  );

  killedAt = Date.now();
  await workers[0]?.kill('SIGKILL');
  workers.push(await startWorkerProcess('compaction-crash-after-kill', env));

  await Promise.all(
    [...cases.values()].map(async (c) => {
      c.outcome = await c.send.result().then(
        (o): TurnResult => ({ status: o.status, turn: o.turn }),
        (error: unknown) => turnOutcomeOf(error) ?? Promise.reject(error),
      );
    }),
  );
}, 240_000);

afterAll(async () => {
  await Promise.all([...cases.values()].map((c) => c.session.terminate('compaction crash test cleanup').catch(() => undefined)));
  for (const worker of workers) await worker.kill('SIGKILL');
  await client?.connection.close();
  await llm?.close();
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

/** What each history event of the compaction's activity says: its summary, and the attempt that answered. */
async function compactionActivities(session: SessionHandle): Promise<{ attempt: number; lastFailure: string | undefined }[]> {
  const events = (await session.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => {
    const data = e.userMetadata?.summary?.data;
    return e.activityTaskScheduledEventAttributes && data && (JSON.parse(Buffer.from(data).toString('utf8')) as string).includes(' · compact · ');
  });
  return scheduled.map((s) => {
    const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === s.eventId?.toString());
    return { attempt: started?.activityTaskStartedEventAttributes?.attempt ?? 0, lastFailure: started?.activityTaskStartedEventAttributes?.lastFailure?.message ?? undefined };
  });
}

describe.each(PROVIDERS)('SIGKILL of the worker process during a compaction call on %s, then a new worker', (provider) => {
  it('had recorded nothing of the compaction when the kill came', () => {
    const { logAtKill } = caseOf(provider);
    expect(logAtKill.filter((e) => e.type === 'context/compacted')).toEqual([]);
    expect(logAtKill.at(-1)).toMatchObject({ type: 'step/start', turn: 2, step: 2 });
  });

  it('retries the compaction call like any LLM call: one activity, answered on its second attempt after the lost one timed out', async () => {
    const c = caseOf(provider);
    expect(c.outcome).toEqual({ status: 'completed', turn: 2 });
    const compactions = llm.requests({ model: c.model, purpose: 'compact' });
    expect(compactions.map((r) => [r.replyKind, r.outcome])).toEqual([
      ['text', 'aborted-by-client'],
      ['text', 'completed'],
    ]);
    expect(compactions[1]?.at).toBeGreaterThan(killedAt);
    // Both attempts asked for the same cut: the same conversation, byte for byte.
    expect(compactions[1]?.rawBody).toBe(compactions[0]?.rawBody);
    const activities = await compactionActivities(c.session);
    expect(activities).toEqual([{ attempt: 2, lastFailure: expect.stringMatching(/heartbeat/i) }]);
  });

  it('records exactly one context/compacted, with the answer of the retry, and the step goes on from it', async () => {
    const c = caseOf(provider);
    const log = await readLog(c.session);
    const turn1End = log.find((e) => e.type === 'turn/end' && e.turn === 1);
    expect(log.filter((e) => e.type === 'context/compacted')).toEqual([expect.objectContaining({ turn: 2, throughSeq: turn1End?.seq, summary: SUMMARY })]);
    expect(JSON.stringify(log)).not.toContain(SUMMARY_LOST);
    // Step 2's request was sent once, after the compaction: the summary, then turn 2's call and its result.
    const steps = llm.requests({ model: c.model, purpose: 'step' });
    expect(steps.map((r) => r.replyKind)).toEqual(['tool_calls', 'text', 'tool_calls', 'text']);
    const sent = JSON.stringify(steps[3]?.body);
    expect(sent).toContain(SUMMARY);
    expect(sent).toContain('a line of the big file');
    expect(sent).not.toContain('hello from the small file');
  });

  it('leaves nothing half-written: every turn and step closed, every call answered, every request paired and within the window', async () => {
    const c = caseOf(provider);
    const log = await readLog(c.session);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    expect(turnShape(log, 2)).toEqual(TOOL_STEP_THEN_COMPACTED_ANSWER);
    const count = (type: SessionEvent['type']) => log.filter((e) => e.type === type).length;
    expect([count('turn/start'), count('step/start'), count('tool/call')]).toEqual([count('turn/end'), count('step/end'), count('tool/result')]);
    expect(log.filter((e) => (e.type === 'turn/end' || e.type === 'step/end') && e.status !== 'completed')).toEqual([]);
    const requests = llm.requests({ model: c.model });
    expect(requests.flatMap((r) => unpairedToolCalls(r.body))).toEqual([]);
    expect(requests.filter((r) => r.replyKind === 'unpaired' || r.replyKind === 'over_window')).toEqual([]);
  });
});
