/**
 * Traces against a real OTLP/HTTP collector on 127.0.0.1 (test/support/otlp-endpoint.ts):
 * a real worker process exports `http/json`, the real CLI exports `http/protobuf`, both
 * configured only by the standard OTEL_* variables. One 3-step turn, whose first LLM call
 * is retried after a 429 and whose steps run 3 tools, must give exactly one tree under the
 * client's `send`. Then the session's history is replayed with tracing on: no span is
 * exported again, and the spans a replay makes have the ids the live run exported.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportHistory } from '../client/sessions';
import { startHttpTarget, type HttpTarget } from '../harness/http-target';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { startTracing, type Tracing } from '../tracing/tracing-provider';
import { workerTracingOptions } from '../tracing/tracing-worker';
import { runEntry } from './support/cli';
import { spawnEntry } from './support/spawn-cli';
import { eventually } from './support/eventually';
import { EVERYTHING_SERVER, writeMcpConfig } from './support/mcp/servers';
import { startOtlpEndpoint, type OtlpEndpoint, type ReceivedSpan } from './support/otlp-endpoint';
import { tracedWorkflowBundleFile } from './support/traced-workflow-bundle';
import { startWorkerProcess } from './support/worker-processes';
import { devServerAddress, devServerNamespace } from './temporal-env';

const MODEL = `trace-${randomUUID().slice(0, 8)}`;
/** The dated snapshot the provider says answered the first call, as real providers answer an alias. */
const SNAPSHOT = `${MODEL}-20250929`;
const PROMPT_MARK = `prompt-${randomUUID()}`;
const taskQueue = `tracing-${randomUUID()}`;
/** Export batches quickly, so the test waits for spans, not for the SDK's 5 s schedule. */
const OTEL_FAST = { OTEL_BSP_SCHEDULE_DELAY: '100' };
/**
 * The traced workflow bundle, made once for the file's worker processes and its replays (as
 * `npm run build` makes one for production) instead of by webpack at each worker's start: seconds
 * of both cores each. The worker refuses a bundle without tracing's interceptors, so a bundle
 * that lacked them would fail these tests, not pass them.
 */
let tracedBundle: string;

let endpoint: OtlpEndpoint;
let llm: ScriptedLlm;
/** Holds every request, so a tool call is in flight when its turn is cancelled. */
let target: HttpTarget;
let worker: WorkerProcess | undefined;
let client: Client;
let workflowId: string;
let sendTrace: ReceivedSpan[];

beforeAll(async () => {
  [endpoint, llm, target, tracedBundle] = await Promise.all([startOtlpEndpoint(), startScriptedLlm(), startHttpTarget(() => 'hold'), tracedWorkflowBundleFile()]);
  worker = await startWorkerProcess(
    'tracing',
    agentWorkerEnv({
      address: devServerAddress(),
      namespace: devServerNamespace(),
      taskQueue,
      llmUrl: llm.url,
      allowlist: [target.host],
      extra: { ...OTEL_FAST, AGENT_WORKFLOW_BUNDLE: tracedBundle, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'agent-worker-under-test' },
    }),
  );
  client = new Client({ connection: await Connection.connect({ address: devServerAddress() }), namespace: devServerNamespace() });
  llm.script(
    MODEL,
    { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
    { kind: 'tool_calls', answeredBy: SNAPSHOT, calls: [{ name: 'calculator', input: { expression: '6*7' } }, { name: 'read_file', input: { path: `missing-${randomUUID()}.txt` } }], usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, reasoningTokens: 10 } },
    { kind: 'tool_calls', calls: [{ name: 'write_file', input: { path: `traced-${randomUUID()}.txt`, content: 'secret-argument-text' } }] },
    { kind: 'text', text: 'done', usage: { inputTokens: 200, outputTokens: 5 } },
  );
  const run = await runEntry('client/main.ts', ['run', '--prompt', PROMPT_MARK, '--model', `anthropic:${MODEL}`, '--keep', '--json'], {
    ...OTEL_FAST,
    TEMPORAL_ADDRESS: devServerAddress(),
    TEMPORAL_NAMESPACE: devServerNamespace(),
    AGENT_TASK_QUEUE: taskQueue,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  });
  expect(run.stderr).not.toMatch(/error/i);
  const out = JSON.parse(run.stdout) as { workflowId: string; status: string };
  expect(out.status).toBe('completed');
  workflowId = out.workflowId;
  // The send's trace is complete once the worker has ended the Update's span, which outlives its turn.
  const send = await eventually('the client span of send', () => endpoint.spans.find((s) => s.name === 'UpdateWithStartWorkflow:send' && s.attributes['temporalWorkflowId'] === workflowId));
  sendTrace = await eventually('the worker span of the send Update', () => {
    const trace = endpoint.spans.filter((s) => s.traceId === send.traceId);
    return trace.some((s) => s.name === 'HandleUpdate:send') && trace.some((s) => s.name === 'ValidateUpdate:send') ? trace : undefined;
  });
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGTERM');
  await client?.connection.close();
  await llm?.close();
  await target?.close();
  await endpoint?.close();
});

/** The trace as an indented outline, siblings by name in code-point order (spans of one workflow task share their start time). */
function outline(spans: ReceivedSpan[]): string[] {
  const children = (parent: string | undefined) => spans.filter((s) => s.parentSpanId === parent).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines: string[] = [];
  const walk = (span: ReceivedSpan, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${span.name} [${span.service}]`);
    for (const child of children(span.spanId)) walk(child, depth + 1);
  };
  for (const root of spans.filter((s) => !spans.some((p) => p.spanId === s.parentSpanId))) walk(root, 0);
  return lines;
}

describe('traces exported over OTLP/HTTP', () => {
  it('gives one trace per turn: send, the turn, each step, each LLM call with one span per attempt, each tool call', () => {
    const W = '[agent-worker-under-test]';
    const llmCall = (depth: number, attempts: number) => [
      `${'  '.repeat(depth)}chat ${MODEL} ${W}`,
      `${'  '.repeat(depth + 1)}StartActivity:callLlm ${W}`,
      ...Array.from({ length: attempts }, () => `${'  '.repeat(depth + 2)}RunActivity:callLlm ${W}`),
    ];
    const tool = (depth: number, name: string) => [
      `${'  '.repeat(depth)}tool ${name} ${W}`,
      `${'  '.repeat(depth + 1)}StartActivity:runTool ${W}`,
      `${'  '.repeat(depth + 2)}RunActivity:runTool ${W}`,
    ];
    // The turn hangs under the client's send, beside the Update handler's spans (see workflows/trace-spans.ts).
    expect(outline(sendTrace)).toEqual([
      'UpdateWithStartWorkflow:send [durable-agent-client]',
      `  HandleUpdate:send ${W}`,
      `  ValidateUpdate:send ${W}`,
      `  turn 1 ${W}`,
      `    step 1 ${W}`,
      ...llmCall(3, 2),
      ...tool(3, 'calculator'),
      ...tool(3, 'read_file'),
      `    step 2 ${W}`,
      ...llmCall(3, 1),
      ...tool(3, 'write_file'),
      `    step 3 ${W}`,
      ...llmCall(3, 1),
    ]);
    expect(endpoint.misrouted).toEqual([]);
    expect(new Set(endpoint.contentTypes)).toEqual(new Set(['application/json', 'application/x-protobuf']));
  });

  it('puts the GenAI attributes on each call and attempt: the failed attempt its type and stated wait, the answered one its usage', () => {
    const attempts = sendTrace.filter((s) => s.name === 'RunActivity:callLlm').sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
    const [failed, answered] = attempts;
    expect(failed?.attributes).toMatchObject({
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': MODEL,
      'agent.llm.attempt': 1,
      'error.type': 'rate_limit',
      'agent.llm.retry_after_ms': 1000,
    });
    expect(failed?.statusCode).toBe(2);
    expect(answered?.attributes).toMatchObject({
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': MODEL,
      'gen_ai.response.model': SNAPSHOT,
      'gen_ai.response.finish_reasons': ['tool_use'],
      'agent.llm.attempt': 2,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read_input_tokens': 100,
      'gen_ai.usage.reasoning_tokens': 10,
    });
    expect(answered?.attributes).not.toHaveProperty('error.type');
    const calls = sendTrace.filter((s) => s.name.startsWith('chat ')).sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
    expect(calls.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_use'], ['tool_use'], ['end_turn']]);
    expect(calls.map((c) => c.attributes['gen_ai.response.model'])).toEqual([SNAPSHOT, MODEL, MODEL]);
    expect(calls.map((c) => c.attributes['gen_ai.usage.input_tokens'])).toEqual([120, expect.any(Number), 200]);
    expect(calls[0]?.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'anthropic', 'gen_ai.request.model': MODEL });
  });

  it('puts name, lane, result code and duration on each tool span', () => {
    const tools: Record<string, Record<string, unknown>> = Object.fromEntries(sendTrace.filter((s) => s.name.startsWith('tool ')).map((s) => [s.attributes['agent.tool.name'], s.attributes]));
    expect(tools['calculator']).toMatchObject({ 'agent.tool.lane': 'read_only', 'agent.tool.result_code': 'ok' });
    expect(tools['read_file']).toMatchObject({ 'agent.tool.lane': 'read_only', 'agent.tool.result_code': 'error' });
    expect(tools['write_file']).toMatchObject({ 'agent.tool.lane': 'side_effecting', 'agent.tool.result_code': 'ok' });
    for (const attributes of Object.values(tools)) expect(attributes['agent.tool.duration_ms']).toEqual(expect.any(Number));
  });

  it('carries no prompt, no tool arguments and no key in any span or resource without AGENT_TRACE_CONTENT', () => {
    const everything = endpoint.exports.join('\n');
    expect(everything).toContain(workflowId);
    for (const needle of [PROMPT_MARK, 'secret-argument-text', '6*7', 'test-anthropic-key']) expect(everything).not.toContain(needle);
  });
});

describe('tool spans of a cancelled step', () => {
  it('closes the span of a call in flight with TOOL_OUTCOME_UNKNOWN and gives a call never dispatched a TOOL_NOT_STARTED span of no duration', async () => {
    const model = `trace-cancel-${randomUUID().slice(0, 8)}`;
    const sessionId = `tracing-cancel-${randomUUID()}`;
    const env = { TEMPORAL_ADDRESS: devServerAddress(), TEMPORAL_NAMESPACE: devServerNamespace(), AGENT_TASK_QUEUE: taskQueue };
    llm.script(model, {
      kind: 'tool_calls',
      calls: [
        { name: 'http_request', input: { method: 'GET', url: `${target.url}/held` } },
        { name: 'write_file', input: { path: `never-${randomUUID()}.txt`, content: 'x' } },
      ],
    });
    const run = spawnEntry('client/main.ts', ['run', '--prompt', 'go', '--model', `anthropic:${model}`, '--id', sessionId, '--keep', '--json'], env);
    // The GET is in flight, so the side-effecting write waits behind it and is never dispatched.
    await target.waitFor('/held');
    expect((await runEntry('client/main.ts', ['cancel', sessionId], env)).code).toBe(0);
    expect(await run.exited).toBe(0);
    expect((JSON.parse(run.stdout()) as { status: string }).status).toBe('cancelled');
    const [inFlight, notStarted] = await eventually('the tool spans of the cancelled step', () => {
      const held = endpoint.spans.find((s) => s.name === 'tool http_request');
      const write = held && endpoint.spans.find((s) => s.name === 'tool write_file' && s.traceId === held.traceId);
      return held && write ? [held, write] : undefined;
    });
    expect(inFlight?.attributes).toMatchObject({ 'agent.tool.lane': 'read_only', 'agent.tool.result_code': 'TOOL_OUTCOME_UNKNOWN' });
    expect(inFlight?.statusCode).toBe(2);
    expect(notStarted?.attributes).toMatchObject({ 'agent.tool.lane': 'side_effecting', 'agent.tool.result_code': 'TOOL_NOT_STARTED', 'agent.tool.duration_ms': 0 });
    expect(notStarted?.statusCode).toBe(2);
    expect(notStarted?.parentSpanId).toBe(inFlight?.parentSpanId);
  });
});

describe('replay with tracing on', () => {
  let tracing: Tracing;
  let bundle: WorkflowBundle;

  beforeAll(async () => {
    // This process's own tracer provider, exporting to the same collector, as a replaying worker's would.
    tracing = await startTracing({ endpoint: `${endpoint.url}/v1/traces`, protocol: 'http/json', content: false }, 'replaying-worker');
    bundle = { code: await readFile(tracedBundle, 'utf8') };
  }, 60_000);

  afterAll(async () => {
    await tracing?.shutdown();
  });

  it('exports no span again when a worker replays the traced session and every recorded golden history', async () => {
    const folder = path.join(import.meta.dirname, 'fixtures', 'histories');
    const goldens = (await readdir(folder)).filter((file) => file.endsWith('.json'));
    const histories = [
      { workflowId, history: historyFromJSON(JSON.parse(await exportHistory(client, workflowId))) },
      ...(await Promise.all(goldens.map(async (file) => ({ workflowId: path.basename(file, '.json'), history: historyFromJSON(JSON.parse(await readFile(path.join(folder, file), 'utf8'))) })))),
    ];
    const before = endpoint.spans.length;
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: bundle, ...(await workerTracingOptions(tracing)) }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    await tracing.processor.forceFlush();
    expect(failures).toEqual([]);
    expect(goldens.length).toBeGreaterThan(10);
    expect(endpoint.spans.slice(before)).toEqual([]);
  });

  it('makes, while replaying, the very spans the live run exported: same ids, same parents', async () => {
    const traced = historyFromJSON(JSON.parse(await exportHistory(client, workflowId)));
    const options = await workerTracingOptions(tracing);
    const replayed: { name: string; spanId: string; parentSpanId?: string }[] = [];
    // The same interceptors, with a sink that, unlike the real one, is called during replay.
    const capture = (_info: unknown, spans: { name: string; spanContext: { spanId: string }; parentSpanId?: string }[]) => {
      replayed.push(...spans.map((s) => ({ name: s.name, spanId: s.spanContext.spanId, parentSpanId: s.parentSpanId })));
    };
    const sinks = { exporter: { export: { fn: capture, callDuringReplay: true } } };
    await Worker.runReplayHistory({ workflowBundle: bundle, interceptors: options.interceptors, sinks }, traced, workflowId);
    const live = endpoint.spans.filter((s) => s.service === 'agent-worker-under-test' && replayed.some((r) => r.spanId === s.spanId));
    // Every span of the turn a replay makes again: the session's own and the interceptor's activity spans.
    const ofTurn = /^(turn|step|chat|tool) |^StartActivity:/;
    const turnSpans = replayed.filter((r) => ofTurn.test(r.name));
    expect(turnSpans.length).toBe(sendTrace.filter((s) => ofTurn.test(s.name)).length);
    for (const span of turnSpans) {
      expect(live.find((l) => l.spanId === span.spanId)).toMatchObject({ name: span.name, parentSpanId: span.parentSpanId });
    }
  });
});

describe('AGENT_TRACE_CONTENT=true', () => {
  const contentQueue = `tracing-content-${randomUUID()}`;
  const contentModel = `trace-content-${randomUUID().slice(0, 8)}`;
  const prompt = `content-prompt-${randomUUID()}`;
  let contentWorker: WorkerProcess | undefined;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    contentWorker = await startWorkerProcess(
      'tracing-content',
      agentWorkerEnv({
        address: devServerAddress(),
        namespace: devServerNamespace(),
        taskQueue: contentQueue,
        llmUrl: llm.url,
        extra: { ...OTEL_FAST, AGENT_WORKFLOW_BUNDLE: tracedBundle, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'agent-worker-content', AGENT_TRACE_CONTENT: 'true' },
      }),
    );
    llm.script(contentModel, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: 'forty-two' });
    const run = await runEntry('client/main.ts', ['run', '--prompt', prompt, '--model', `anthropic:${contentModel}`, '--json'], {
      TEMPORAL_ADDRESS: devServerAddress(),
      TEMPORAL_NAMESPACE: devServerNamespace(),
      AGENT_TASK_QUEUE: contentQueue,
    });
    expect((JSON.parse(run.stdout) as { status: string }).status).toBe('completed');
    spans = await eventually('the content worker spans', () => {
      const mine = endpoint.spans.filter((s) => s.service === 'agent-worker-content');
      return mine.filter((s) => s.name === 'RunActivity:callLlm').length === 2 && mine.some((s) => s.name === 'RunActivity:runTool') ? mine : undefined;
    });
  }, 120_000);

  afterAll(async () => {
    await contentWorker?.kill('SIGTERM');
  });

  it('adds the messages sent, the answer and the tool arguments to the attempts, and still no key', () => {
    const attempts = spans.filter((s) => s.name === 'RunActivity:callLlm').sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
    expect(String(attempts[0]?.attributes['gen_ai.input.messages'])).toContain(prompt);
    expect(String(attempts[1]?.attributes['gen_ai.output.messages'])).toContain('forty-two');
    expect(spans.find((s) => s.name === 'RunActivity:runTool')?.attributes).toMatchObject({ 'agent.tool.name': 'calculator', 'agent.tool.arguments': JSON.stringify({ expression: '6*7' }) });
    expect(endpoint.exports.join('\n')).not.toContain('test-anthropic-key');
  });
});

describe('a failed turn with encryption on and AGENT_TRACE_CONTENT unset', () => {
  const queue = `tracing-encrypted-${randomUUID()}`;
  const model = `trace-encrypted-${randomUUID().slice(0, 8)}`;
  const mark = `provider-said-${randomUUID()}`;
  const keyEnv = { AGENT_ENCRYPTION_KEY: randomBytes(32).toString('base64'), AGENT_ENCRYPTION_KEY_ID: 'trace-key' };
  let encryptedWorker: WorkerProcess | undefined;
  let spans: ReceivedSpan[];
  let exported: string;

  beforeAll(async () => {
    encryptedWorker = await startWorkerProcess(
      'tracing-encrypted',
      agentWorkerEnv({
        address: devServerAddress(),
        namespace: devServerNamespace(),
        taskQueue: queue,
        llmUrl: llm.url,
        extra: { ...OTEL_FAST, ...keyEnv, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'agent-worker-encrypted' },
      }),
    );
    llm.script(model, { kind: 'status', status: 401, message: `bad key, ${mark}` });
    const run = await runEntry('client/main.ts', ['run', '--prompt', 'hello', '--model', `anthropic:${model}`, '--json'], {
      ...OTEL_FAST,
      ...keyEnv,
      TEMPORAL_ADDRESS: devServerAddress(),
      TEMPORAL_NAMESPACE: devServerNamespace(),
      AGENT_TASK_QUEUE: queue,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url,
      OTEL_SERVICE_NAME: 'agent-client-encrypted',
    });
    const out = JSON.parse(run.stdout) as { workflowId: string; status: string; failure?: { type: string; message: string } };
    // The client holds the key: it reads the provider's words, in plain text, as the person asking should.
    expect(out).toMatchObject({ status: 'failed', failure: { type: 'auth_error', message: expect.stringContaining(mark) } });
    spans = await eventually('the failed turn\'s spans', () => {
      const mine = endpoint.spans.filter((s) => s.service === 'agent-worker-encrypted');
      return mine.some((s) => s.name === 'RunActivity:callLlm') && mine.some((s) => s.name === 'turn 1') ? mine : undefined;
    });
    exported = endpoint.exports.filter((e) => e.includes('agent-worker-encrypted') || e.includes('agent-client-encrypted')).join('\n');
  }, 120_000);

  afterAll(async () => {
    await encryptedWorker?.kill('SIGTERM');
  });

  it('marks the failed spans with the failure type only: no provider message, no exception message or stack trace reaches the collector', () => {
    const attempt = spans.find((s) => s.name === 'RunActivity:callLlm');
    expect(attempt).toMatchObject({ statusCode: 2, attributes: expect.objectContaining({ 'error.type': 'auth_error' }) });
    // The turn itself ends normally, with a failed result; what failed on the way are these.
    const failed = spans.filter((s) => s.statusCode === 2);
    expect(failed.map((s) => s.name).sort()).toEqual(['HandleUpdate:send', 'RunActivity:callLlm', 'StartActivity:callLlm', `chat ${model}`, 'step 1'].sort());
    for (const name of [`chat ${model}`, 'step 1']) expect(failed.find((s) => s.name === name)?.attributes['error.type'], name).toBe('auth_error');
    expect(exported).not.toContain(mark);
    expect(exported).toContain('"message":"auth_error"');
    expect(exported).not.toContain('exception.stacktrace');
    expect(exported).not.toContain('exception.message');
  });
});

describe.each([
  { content: true, says: 'puts an MCP call’s arguments on its attempt’s span, as for a built-in tool' },
  { content: false, says: 'never puts an MCP call’s arguments on a span' },
])('an MCP tool call with AGENT_TRACE_CONTENT=$content', ({ content, says }) => {
  const queue = `tracing-mcp-${randomUUID()}`;
  const model = `trace-mcp-${randomUUID().slice(0, 8)}`;
  const service = `agent-worker-mcp-${content}`;
  const message = `mcp-argument-${randomUUID()}`;
  let mcpWorker: WorkerProcess | undefined;
  let attempt: ReceivedSpan;

  beforeAll(async () => {
    mcpWorker = await startWorkerProcess(
      `tracing-mcp-${content}`,
      agentWorkerEnv({
        address: devServerAddress(),
        namespace: devServerNamespace(),
        taskQueue: queue,
        llmUrl: llm.url,
        extra: {
          ...OTEL_FAST,
          AGENT_WORKFLOW_BUNDLE: tracedBundle,
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: service,
          AGENT_TRACE_CONTENT: String(content),
          AGENT_MCP_CONFIG: await writeMcpConfig({ everything: EVERYTHING_SERVER }),
        },
      }),
    );
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'mcp__everything__echo', input: { message } }] }, { kind: 'text', text: 'echoed' });
    const run = await runEntry('client/main.ts', ['run', '--prompt', 'echo it', '--model', `anthropic:${model}`, '--mcp', 'everything', '--json'], {
      TEMPORAL_ADDRESS: devServerAddress(),
      TEMPORAL_NAMESPACE: devServerNamespace(),
      AGENT_TASK_QUEUE: queue,
    });
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', messages: expect.arrayContaining([expect.objectContaining({ role: 'tool', code: 'ok', content: `Echo: ${message}` })]) });
    attempt = await eventually('the MCP call attempt span', () => endpoint.spans.find((s) => s.service === service && s.name === 'RunActivity:callMcpTool'));
  }, 120_000);

  afterAll(async () => {
    await mcpWorker?.kill('SIGTERM');
  });

  it(says, () => {
    const exported = endpoint.exports.join('\n');
    if (content) {
      expect(attempt.attributes).toMatchObject({ 'agent.mcp.server': 'everything', 'agent.tool.name': 'echo', 'agent.tool.arguments': JSON.stringify({ message }) });
      expect(exported).toContain(message);
    } else {
      expect(attempt.attributes).not.toHaveProperty('agent.tool.arguments');
      expect(exported).not.toContain(message);
    }
  });
});
