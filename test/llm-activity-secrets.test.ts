/**
 * Every message the LLM activity lets out (the failure Temporal records, its cause, the
 * attempt span's status) has the worker's configured provider keys masked, whatever their
 * shape: the key-shaped patterns know only OpenAI's, Anthropic's and Google's, and these
 * keys are shaped like none of them. Unit level: the activity runs in
 * MockActivityEnvironment against the real scripted LLM over HTTP, inside a real
 * OpenTelemetry span; `test/secrets.test.ts` proves the same end to end.
 */
import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmActivities, type LlmActivityDeps } from '../activities/llm/activity';
import { redactSecrets } from '../activities/llm/llm-error';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import type { LlmCallInput } from '../contracts/llm-call';
import type { ProviderId } from '../contracts/model-ref';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import { SessionLog } from '../contracts/session-log';
import { useScriptedLlmEndpoint } from './support/scripted-llm-endpoint';

const { llm, dispatcher } = useScriptedLlmEndpoint();

/** Fresh per run, in shapes no pattern knows: an Azure key (32 hex digits), a Groq key, a vLLM token. */
const KEYS: Record<ProviderId, string> = {
  openai: randomBytes(16).toString('hex'),
  anthropic: `gsk_${randomBytes(16).toString('base64url')}`,
  google: `vllm.${randomBytes(9).toString('hex')}~token/x`,
};
const ALL_KEYS = Object.values(KEYS);

const exporter = new InMemorySpanExporter();
const tracing = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => {
  tracing.register();
});
afterAll(async () => {
  await tracing.shutdown();
  trace.disable();
});

const run = { workflowId: 'session-secrets', runId: 'run-secrets' };

function deps(logCache: SessionLogCache): LlmActivityDeps {
  const endpoint = (provider: ProviderId) => ({ baseUrl: llm().url, apiKey: KEYS[provider] });
  return { dispatcher, providers: { anthropic: endpoint('anthropic'), openai: endpoint('openai'), google: endpoint('google') }, streamIdleTimeoutMs: 5_000, logCache };
}

/** The worker's client as the activity sees it: the session's Query answers `query`. */
function environment(query: () => Promise<unknown>): MockActivityEnvironment {
  const client = { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), workflow: { getHandle: () => ({ query }) } } as unknown as Client;
  return new MockActivityEnvironment({ workflowExecution: run, attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now() }, { client });
}

/**
 * One attempt, as the worker runs it inside the span Temporal's interceptor opens: what it
 * threw, and that span. With `failingQuery`, the worker's copy does not hold the log and
 * the session's Query for it fails so.
 */
async function attempt(provider: ProviderId, model: string, failingQuery?: () => Promise<unknown>) {
  const cache = new SessionLogCache(1024 * 1024);
  const log = new SessionLog();
  log.append({ type: 'turn/start', turn: 1, text: 'hi' }, 0);
  if (!failingQuery) cache.open(run, { tools: [], maxTokens: 100 }, log.events);
  const query = failingQuery ?? (() => Promise.resolve(DEFAULT_RETRY_POLICY));
  const input: LlmCallInput = { sessionId: run.workflowId, turn: 1, step: 1, model: `${provider}:${model}`, retryPolicy: DEFAULT_RETRY_POLICY, uptoSeq: log.length, logDigest: log.digest };
  exporter.reset();
  const error = await trace.getTracer('test').startActiveSpan(`attempt ${model}`, async (span) => {
    try {
      await environment(query).run(createLlmActivities(deps(cache)).callLlm, input);
      return undefined;
    } catch (e) {
      return e;
    } finally {
      span.end();
    }
  });
  const span = exporter.getFinishedSpans().find((s) => s.name === `attempt ${model}`);
  return { error, span };
}

/** Everything of a failure that goes to history: its message, its cause chain's messages and stacks. */
function recorded(error: unknown): string {
  const parts: string[] = [];
  for (let e = error; e instanceof Error; e = e.cause) parts.push(e.message, e.stack ?? '');
  return parts.join('\n');
}

describe('a configured provider key that no pattern knows never leaves the LLM activity', () => {
  it.each(['openai', 'anthropic', 'google'] as const)('%s: a 401 quoting the call\'s key, and the others, fails with every key masked, in the failure and the span', async (provider) => {
    const model = `echo-401-${provider}-${Date.now()}`;
    const quoted = ALL_KEYS.join(' and ');
    for (const key of ALL_KEYS) expect(redactSecrets(quoted)).toContain(key); // the patterns alone miss each
    llm().script(model, { kind: 'status', status: 401, message: `Incorrect API key provided: ${quoted}.` });
    const { error, span } = await attempt(provider, model);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'auth_error', nonRetryable: true, message: expect.stringContaining('Incorrect API key provided: [redacted] and [redacted] and [redacted]') });
    expect(span?.status.message).toContain('[redacted]');
    const request = llm().requests({ model })[0];
    expect(JSON.stringify(request?.headers)).toContain(KEYS[provider]); // the key was sent, so it could have come back
    for (const key of ALL_KEYS) {
      expect(recorded(error)).not.toContain(key);
      expect(JSON.stringify({ status: span?.status, attributes: span?.attributes, events: span?.events })).not.toContain(key);
    }
  });

  it('masks the start of a key that the clip of a long provider message cut off', async () => {
    const model = `echo-clipped-${Date.now()}`;
    llm().script(model, { kind: 'status', status: 401, body: `${'y'.repeat(280)} ${KEYS.openai}` });
    const { error } = await attempt('openai', model);
    expect(error).toMatchObject({ type: 'auth_error', message: expect.stringMatching(/y \[redacted\]…$/) });
    expect(recorded(error)).not.toContain(KEYS.openai.slice(0, 8));
  });

  it('masks a key quoted in an error inside the stream, which is retried', async () => {
    const model = `echo-in-stream-${Date.now()}`;
    llm().script(model, { kind: 'stream_error', text: 'partial', message: `upstream refused key ${KEYS.anthropic}` });
    const { error, span } = await attempt('anthropic', model);
    expect(error).toMatchObject({ type: 'overloaded', nonRetryable: false, message: expect.stringContaining('upstream refused key [redacted]') });
    expect(recorded(error)).not.toContain(KEYS.anthropic);
    expect(span?.status.message).not.toContain(KEYS.anthropic);
  });

  it('masks a key in a failure that is not a provider error, and in the cause recorded with it', async () => {
    const model = `echo-unclassified-${Date.now()}`;
    const { error } = await attempt('google', model, () => Promise.reject(new Error(`proxy said: bad token ${KEYS.google}`)));
    expect(error).toMatchObject({ type: 'unknown', nonRetryable: true, message: expect.stringContaining('bad token [redacted]') });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(recorded(error)).not.toContain(KEYS.google);
  });
});
