import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../bench/options';
import { answerOf } from '../bench/stream';
import { actionsBetween, parseActionCounts, totalActions } from '../bench/stream-actions';
import { pieceLatencies } from '../bench/stream-latency';
import { StreamResultSchema, type StreamResult } from '../bench/stream-result';
import { startScriptedLlm } from '../testing/scripted-llm/server';
import { runEntry, type CliResult } from './support/cli';

/**
 * `npm run bench -- --only stream` kept honest: the pieces it measures with are checked on
 * their own (the action counter's parse, how a piece's receipt is found, the scripted LLM's
 * send times), and the whole benchmark runs once at its smoke size (its own dev server,
 * worker process, gateway and Chromium) to show it prints its figures. Timings on a shared
 * machine are noise: nothing here asserts one.
 */

describe('the stream benchmark\'s measures', () => {
  const metrics = [
    '# HELP action action counter',
    '# TYPE action counter',
    'action{action_type="grpc_QueryWorkflow",namespace="default",operation="QueryWorkflow",service_name="frontend"} 7',
    'action{action_type="grpc_QueryWorkflow",namespace="other",operation="QueryWorkflow",service_name="frontend"} 100',
    'action{action_type="command_ScheduleActivityTask",namespace="default",operation="RespondWorkflowTaskCompleted",service_name="history"} 2',
    'action{action_type="command_ScheduleActivityTask",namespace="default",operation="RespondWorkflowTaskCompleted",service_name="frontend"} 1',
    'action_latency_bucket{le="1"} 5',
  ].join('\n');

  it('reads billable actions from the dev server\'s action counter, of one namespace, summed by type', () => {
    const counts = parseActionCounts(metrics, 'default');
    expect(counts).toEqual({ grpc_QueryWorkflow: 7, command_ScheduleActivityTask: 3 });
    expect(totalActions(counts)).toBe(10);
  });

  it('counts what moved between two readings, and nothing that did not', () => {
    expect(actionsBetween({ a: 2, b: 5 }, { a: 4, b: 5, c: 1 })).toEqual({ a: 2, c: 1 });
  });

  it('times a piece at the first receipt that holds its whole text, however many pieces it carried', () => {
    const sent = [0, 1, 2, 3].map((index) => ({ index, at: 1_000 + index * 10 }));
    // Pieces of 4 characters, 16 in all: the first receipt has a piece and a half, the second the rest.
    const receipts = [
      { end: 16, at: 1_100 },
      { end: 6, at: 1_005 },
    ];
    expect(pieceLatencies(sent, 4, 16, receipts)).toEqual([5, 90, 80, 70]);
    expect(pieceLatencies(sent, 4, 16, [{ end: 7, at: 1_001 }])).toEqual([1]);
  });

  it('scripts answers of exactly the pieces asked for', () => {
    expect(answerOf(300, 4)).toHaveLength(1_200);
    expect(answerOf(3, 4)).toBe('t0  t1  t2  ');
  });

  it('reads --only stream', () => {
    expect(parseBenchArgs(['--only', 'stream', '--quick']).only).toBe('stream');
    expect(() => parseBenchArgs(['--only', 'streams'])).toThrow(/only/);
  });

  it('has the scripted LLM say when it wrote each piece of a text reply, in order, by its index', async () => {
    const sent: { requestSeq: number; model: string; index: number; at: number }[] = [];
    const llm = await startScriptedLlm({ demo: false, onContentSent: (s) => sent.push(s) });
    try {
      llm.script('timed', { kind: 'text', text: 'abcdefghij', chunkSize: 4 });
      const before = performance.timeOrigin + performance.now();
      const response = await fetch(`${llm.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
        body: JSON.stringify({ model: 'timed', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await response.text();
      const after = performance.timeOrigin + performance.now();
      expect(body).toContain('"content":"ij"');
      expect(sent.map((s) => [s.model, s.index])).toEqual([
        ['timed', 0],
        ['timed', 1],
        ['timed', 2],
      ]);
      expect(new Set(sent.map((s) => s.requestSeq))).toEqual(new Set([llm.requests()[0]?.seq]));
      for (const s of sent) expect(s.at).toBeGreaterThanOrEqual(before);
      for (const s of sent) expect(s.at).toBeLessThanOrEqual(after);
    } finally {
      await llm.close();
    }
  });
});

describe('npm run bench -- --smoke --only stream', () => {
  const out = path.join(tmpdir(), `bench-stream-${randomUUID()}.json`);
  let run: CliResult;
  let result: StreamResult;

  beforeAll(async () => {
    run = await runEntry('bench/main.ts', ['--smoke', '--only', 'stream', '--out', out], {}, 240_000);
    if (run.code !== 0) throw new Error(`bench --smoke --only stream exited with ${run.code}:\n${run.stderr.slice(-3_000)}`);
    result = StreamResultSchema.parse((JSON.parse(await readFile(out, 'utf8')) as { stream: unknown }).stream);
  }, 300_000);

  afterAll(async () => {
    await rm(out, { force: true });
  });

  it('prints its table with the machine, and writes the figures as JSON', () => {
    expect(run.stdout).toMatch(/^Benchmark \(live stream only\) · \S+ · \d+ CPUs/m);
    expect(run.stdout).toContain('latency p50 / p95 / max ms');
    expect(run.stdout).toContain('Each transport alone');
    const { pieces, longPieces, viewers } = result.settings;
    expect(viewers).toHaveLength(2);
    const [one, more] = viewers;
    expect(result.runs.map((r) => [r.path, r.viewers, r.pieces])).toEqual([
      ['none', 0, pieces],
      ['gateway', one, pieces],
      ['gateway', more, pieces],
      ['gateway', 1, longPieces],
      ['watch', one, pieces],
      ['watch', more, pieces],
      ['watch', 1, longPieces],
    ]);
  });

  it('counts each turn\'s billable actions from the dev server, the turn\'s own commands among them', () => {
    for (const r of result.runs) {
      expect(r.totalActions).toBeGreaterThan(0);
      expect(r.actions.command_ScheduleActivityTask).toBeGreaterThanOrEqual(1);
    }
  });

  it('has the browser receive the answer\'s text live, as deltas, in the gateway\'s turns', () => {
    for (const r of result.runs.filter((x) => x.path === 'gateway')) {
      expect(r.piecesLive).toBeGreaterThan(0);
      expect(r.latency.n).toBe(r.piecesLive);
    }
  });

  it('shows watch\'s Queries growing with its watchers', () => {
    const { pieces, viewers } = result.settings;
    const queries = (n: number | undefined) => result.runs.find((r) => r.path === 'watch' && r.viewers === n && r.pieces === pieces)?.actions.grpc_QueryWorkflow ?? 0;
    expect(queries(viewers[1])).toBeGreaterThan(queries(viewers[0]));
  });

  it('times the embedded transport alone', () => {
    const [hop] = result.hops;
    expect(hop?.transport).toBe('embedded');
    expect(hop?.received).toBeGreaterThan(0);
  });
});
