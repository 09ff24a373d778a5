/**
 * A provider whose reported usage is far too low (an OpenAI-compatible server that counts
 * 12 input tokens for every request, say) must not keep a session from compacting: the
 * estimate of the next request never falls below the request's own size (characters / 4).
 * A real session on a real Temporal server, against the scripted LLM, which refuses any
 * request above the window as a provider does; and the progress a client reads says the
 * reported usage looks wrong.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeProgress, readProgress } from '../client/progress';
import { endSession, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import type { SessionEvent } from '../contracts/session-log';
import type { RecordedRequest } from '../testing/scripted-llm/server';
import { useAgentHarness } from './support/agent-harness';
import { eventually } from './support/eventually';
import { unpairedToolCalls } from './support/pairing';
import { useTempDir } from './support/temp-dir';

const TURNS = 16;
const WINDOW = 4_000;
const FILE_BYTES = 2 * 1024;
/** What the provider claims every request held, whatever its size. */
const REPORTED = { inputTokens: 12, outputTokens: 5 };

const workspace = useTempDir('reported-usage-');
const h = useAgentHarness(() => ({ env: { AGENT_WORKSPACE: workspace() } }));

const fileName = (turn: number) => `notes-${turn}.txt`;

interface Run {
  model: string;
  session: SessionHandle;
  log: SessionEvent[];
  requests: RecordedRequest[];
  /** What a client following the session reads while the last turn waits for its answer. */
  progress: string[];
}

let run: Run | undefined;
const ran = (): Run => {
  if (!run) throw new Error('the session did not run: see the beforeAll failure');
  return run;
};

beforeAll(async () => {
  const model = `under-reported-${Date.now()}`;
  await mkdir(workspace(), { recursive: true });
  for (let turn = 1; turn <= TURNS; turn++) {
    await writeFile(path.join(workspace(), fileName(turn)), `file ${turn}: ${'lorem ipsum dolor sit amet '.repeat(100)}`.slice(0, FILE_BYTES));
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: fileName(turn) } }], usage: REPORTED },
      // The last answer waits, so a client reads the session's progress while its turn runs.
      { kind: 'text', text: `File ${turn} is read.`, usage: REPORTED, ...(turn === TURNS ? { hold: true } : {}) },
    );
  }
  h().llm.setContextWindow(model, WINDOW);
  const session = await startSession(h().client, h().env, { model: `openai:${model}`, tools: ['read_file'], contextWindow: WINDOW, idleTimeoutMs: 120_000 });
  let progress: string[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const answered = sendAndWait(session, `please read ${fileName(turn)}`);
    if (turn === TURNS) {
      await eventually('the last answer to be held', () => h().llm.requests({ model, purpose: 'step' }).find((r) => r.outcome === 'pending'));
      progress = describeProgress(await readProgress(h().client, session), Date.now());
      h().llm.release(model);
    }
    const outcome = await answered;
    if (outcome.status !== 'completed') throw new Error(`turn ${turn} ended ${outcome.status}: ${JSON.stringify(outcome.failure)}`);
  }
  run = { model, session, log: await readLog(session), requests: h().llm.requests({ model }), progress };
}, 120_000);

describe('a provider that reports 12 input tokens for every request', () => {
  it('still has the session compact before a request passes the window: none sent above it, none refused', () => {
    const { model, requests, log } = ran();
    expect(log.filter((e) => e.type === 'context/compacted').length).toBeGreaterThanOrEqual(2);
    expect(h().llm.requests({ model, replyKind: 'over_window' })).toEqual([]);
    expect(requests.filter((r) => r.tokens > WINDOW).map((r) => r.tokens)).toEqual([]);
    expect(requests.flatMap((r) => unpairedToolCalls(r.body))).toEqual([]);
    // Without compaction the last request would carry all 16 files, several windows' worth.
    expect(Math.max(...requests.map((r) => r.tokens))).toBeGreaterThan(WINDOW / 2);
  });

  it('records each compaction with the request size it was estimated at, above compactAt of the window', () => {
    const compactions = ran().log.filter((e) => e.type === 'context/compacted');
    expect(compactions.map((c) => c.tokensBefore > 0.75 * WINDOW)).toEqual(compactions.map(() => true));
  });

  it('tells a client following the session that the reported usage looks wrong, with both counts', () => {
    const lines = ran().progress.filter((line) => line.includes('the provider reported'));
    expect(lines).toEqual([expect.stringMatching(/^turn 16 · step \d+\/50 · the provider reported 12 input tokens for a request of ~\d+: compaction estimates from the request's size$/)]);
    const shown = Number(/~(\d+)/.exec(lines[0] ?? '')?.[1]);
    expect(shown).toBeGreaterThan(24);
    return endSession(ran().session);
  });
});
