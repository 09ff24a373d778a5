/**
 * The MCP tools a compaction call offers: those the whole run has listed, also a copy of a
 * list the last run's tail cut off, which the run records after its tail (so after the cut).
 * The activity runs in MockActivityEnvironment against the real scripted LLM over HTTP,
 * reading the log from the worker's copy.
 */
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createLlmActivities } from '../activities/llm/activity';
import { COMPACTION_INSTRUCTION } from '../activities/llm/compaction-request';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import type { LlmCallInput, LlmSettings } from '../contracts/llm-call';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import { SessionLog, type NewSessionEvent, type SessionEvent } from '../contracts/session-log';
import { useScriptedLlmEndpoint } from './support/scripted-llm-endpoint';

const { llm, dispatcher } = useScriptedLlmEndpoint();

const SETTINGS: LlmSettings = {
  tools: [{ name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object' } }],
  maxTokens: 256,
};
const USAGE = { inputTokens: 10, outputTokens: 5 };

function turnEvents(turn: number): NewSessionEvent[] {
  return [
    { type: 'turn/start', turn, text: `question ${turn}` },
    { type: 'step/start', turn, step: 1, model: 'anthropic:m' },
    { type: 'assistant', turn, step: 1, message: { role: 'assistant', text: `answer ${turn}`, toolCalls: [], stopReason: 'end_turn', usage: USAGE } },
    { type: 'step/end', turn, step: 1, status: 'completed' },
    { type: 'turn/end', turn, status: 'completed', reason: 'answered' },
  ];
}

const listed: NewSessionEvent = {
  type: 'tools/listed',
  turn: 1,
  servers: ['fs'],
  tools: [{ name: 'mcp__fs__read', server: 'fs', tool: 'read', description: 'Reads.', inputSchema: { type: 'object' }, lane: 'read_only', timeoutMs: 30_000 }],
};

/** A run continued from one whose tail started at seq 40, with the copy of the tool list recorded after it. */
function continuedRun(): { log: SessionLog; cut: number } {
  const tail = new SessionLog(turnEvents(1).map((e, i) => ({ ...e, seq: 40 + i, at: 0 }) as SessionEvent));
  const cut = tail.events.at(-1)!.seq;
  tail.append(listed, 0);
  for (const e of turnEvents(2).slice(0, 2)) tail.append(e, 0);
  return { log: tail, cut };
}

function activityFor(log: SessionLog, heartbeats: unknown[] = []) {
  const run = { workflowId: `session-tools-${Date.now()}-${Math.random()}`, runId: 'run-2' };
  const cache = new SessionLogCache(1024 * 1024);
  cache.open(run, SETTINGS, log.events);
  const endpoint = { baseUrl: llm().url, apiKey: 'unit-key' };
  const activities = createLlmActivities({ dispatcher, providers: { anthropic: endpoint, openai: endpoint, google: endpoint }, streamIdleTimeoutMs: 5_000, logCache: cache, heartbeatIntervalMs: 10 });
  const client = { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), workflow: { getHandle: () => ({ query: () => Promise.resolve(DEFAULT_RETRY_POLICY) }) } } as unknown as Client;
  const env = new MockActivityEnvironment({ workflowExecution: run, attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now() }, { client });
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return (input: Omit<LlmCallInput, 'sessionId' | 'step' | 'retryPolicy'>) => env.run(activities.callLlm, { sessionId: run.workflowId, step: 1, retryPolicy: DEFAULT_RETRY_POLICY, ...input });
}

type AnthropicBody = { tools?: { name: string }[]; messages: { content: { type: string; text?: string }[] }[] };
const sentBody = (model: string) => llm().requests({ model }).at(-1)?.body as AnthropicBody;
const texts = (body: AnthropicBody) => body.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])));

describe('the tools a compaction call offers', () => {
  it('are the MCP tools of the whole run, also a list recorded after the cut, while the conversation stops at the cut', async () => {
    const model = `compact-tools-${Date.now()}`;
    const { log, cut } = continuedRun();
    await activityFor(log)({ model: `anthropic:${model}`, turn: 2, purpose: 'compact', uptoSeq: cut + 1, toolsUptoSeq: log.nextSeq, logDigest: log.digest });
    const body = sentBody(model);
    expect(body.tools?.map((t) => t.name)).toEqual(['mcp__fs__read', 'read_file']);
    expect(texts(body)).toEqual(['question 1', 'answer 1', COMPACTION_INSTRUCTION]);
  });

  it('are those before the cut for a call scheduled without toolsUptoSeq (before it existed)', async () => {
    const model = `compact-tools-old-${Date.now()}`;
    const { log, cut } = continuedRun();
    const before = new SessionLog(log.events.filter((e) => e.seq <= cut));
    await activityFor(log)({ model: `anthropic:${model}`, turn: 2, purpose: 'compact', uptoSeq: cut + 1, logDigest: before.digest });
    const body = sentBody(model);
    expect(body.tools?.map((t) => t.name)).toEqual(['read_file']);
    expect(texts(body)).toEqual(['question 1', 'answer 1', COMPACTION_INSTRUCTION]);
  });
});

describe('what a compaction call heartbeats', () => {
  it('says it is a compaction, so watch shows it as one; a step call says nothing of it', async () => {
    const model = `compact-beat-${Date.now()}`;
    const { log, cut } = continuedRun();
    llm().scriptCompaction(model, { kind: 'text', text: 'a summary', delayMs: 200 });
    llm().script(model, { kind: 'text', text: 'an answer', delayMs: 200 });
    const compacting: unknown[] = [];
    await activityFor(log, compacting)({ model: `anthropic:${model}`, turn: 2, purpose: 'compact', uptoSeq: cut + 1, toolsUptoSeq: log.nextSeq, logDigest: log.digest });
    expect(compacting.length).toBeGreaterThan(0);
    expect(compacting).toEqual(compacting.map(() => expect.objectContaining({ purpose: 'compact' })));
    const stepping: unknown[] = [];
    await activityFor(log, stepping)({ model: `anthropic:${model}`, turn: 2, uptoSeq: log.nextSeq, logDigest: log.digest });
    expect(stepping.length).toBeGreaterThan(0);
    expect(stepping).toEqual(stepping.map(() => expect.not.objectContaining({ purpose: expect.anything() })));
  });
});
