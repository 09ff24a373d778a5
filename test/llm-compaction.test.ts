/**
 * The LLM activity's side of compaction and of cleared tool results: what it sends for a
 * `purpose: 'compact'` call and what it returns, and what `clearToolResultsAfter` changes
 * in a step's request. Unit level: the activity runs in MockActivityEnvironment against the
 * real scripted LLM over HTTP, reading the log from the worker's copy.
 */
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createLlmActivities } from '../activities/llm/activity';
import { COMPACTION_INSTRUCTION, compactionAnswer } from '../activities/llm/compaction-request';
import { SessionLogCache } from '../activities/llm/session-log-cache';
import { clearedResultLine, SUMMARY_PREFIX } from '../contracts/conversation';
import type { LlmCallInput, LlmSettings } from '../contracts/llm-call';
import type { AssistantMessage } from '../contracts/messages';
import { DEFAULT_RETRY_POLICY } from '../contracts/retry-policy';
import { SessionLog, type NewSessionEvent } from '../contracts/session-log';
import { useScriptedLlmEndpoint } from './support/scripted-llm-endpoint';

const { llm, dispatcher } = useScriptedLlmEndpoint();

let counter = 0;
const modelName = (prefix: string) => `${prefix}-${++counter}-${Date.now()}`;

const SETTINGS: LlmSettings = {
  system: 'You are terse.',
  tools: [{ name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }],
  maxTokens: 256,
};

const USAGE = { inputTokens: 10, outputTokens: 5 };

/** One turn that read a file and answered: turn/start … turn/end. */
function turnEvents(turn: number, fileContent: string): NewSessionEvent[] {
  const callId = `toolu_${turn}`;
  return [
    { type: 'turn/start', turn, text: `question ${turn}` },
    { type: 'step/start', turn, step: 1, model: 'anthropic:m' },
    { type: 'assistant', turn, step: 1, message: { role: 'assistant', text: '', toolCalls: [{ id: callId, name: 'read_file', input: { path: `f${turn}.txt` } }], stopReason: 'tool_use', usage: USAGE } },
    { type: 'step/end', turn, step: 1, status: 'completed' },
    { type: 'tool/call', turn, step: 1, callId, name: 'read_file', input: { path: `f${turn}.txt` } },
    { type: 'tool/result', turn, step: 1, callId, name: 'read_file', code: 'ok', content: fileContent },
    { type: 'step/start', turn, step: 2, model: 'anthropic:m' },
    { type: 'assistant', turn, step: 2, message: { role: 'assistant', text: `answer ${turn}`, toolCalls: [], stopReason: 'end_turn', usage: USAGE } },
    { type: 'step/end', turn, step: 2, status: 'completed' },
    { type: 'turn/end', turn, status: 'completed', reason: 'answered' },
  ];
}

function logOf(events: NewSessionEvent[], log = new SessionLog()): SessionLog {
  for (const event of events) log.append(event, 1_000);
  return log;
}

/** The seq of the last `turn/end` of `turn`: where a compaction may cut. */
const endOf = (log: SessionLog, turn: number) => log.events.find((e) => e.type === 'turn/end' && e.turn === turn)!.seq;

/** The activity on a run whose log the worker's copy holds, so it reads no Query. */
function activityFor(log: SessionLog) {
  const run = { workflowId: `session-${++counter}`, runId: 'run-1' };
  const cache = new SessionLogCache(1024 * 1024);
  cache.open(run, SETTINGS, log.events);
  const endpoint = { baseUrl: llm().url, apiKey: 'unit-key' };
  const activities = createLlmActivities({
    dispatcher,
    providers: { anthropic: endpoint, openai: endpoint, google: endpoint },
    streamIdleTimeoutMs: 5_000,
    logCache: cache,
    prices: new Map([['anthropic:priced', { input: 3, output: 15 }]]),
  });
  const client = { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), workflow: { getHandle: () => ({ query: () => Promise.resolve(DEFAULT_RETRY_POLICY) }) } } as unknown as Client;
  const env = new MockActivityEnvironment({ workflowExecution: run, attempt: 1, scheduledTimestampMs: Date.now(), currentAttemptScheduledTimestampMs: Date.now() }, { client });
  return (input: Omit<LlmCallInput, 'sessionId' | 'step' | 'retryPolicy' | 'logDigest'>, digestOf = log): Promise<AssistantMessage> =>
    env.run(activities.callLlm, { sessionId: run.workflowId, step: 1, retryPolicy: DEFAULT_RETRY_POLICY, logDigest: digestUpto(digestOf, input.uptoSeq), ...input });
}

/** The digest the workflow schedules a call with: of the run's events before `uptoSeq`. */
function digestUpto(log: SessionLog, uptoSeq: number): string {
  return new SessionLog(log.events.filter((e) => e.seq < uptoSeq)).digest;
}

type AnthropicBody = { system?: unknown; tools?: unknown[]; tool_choice?: unknown; messages: { role: string; content: { type: string; text?: string; content?: string }[] }[] };
const sentBody = (model: string) => llm().requests({ model }).at(-1)?.body as AnthropicBody;
const textsOf = (body: AnthropicBody) => body.messages.flatMap((m) => m.content.filter((b) => b.type === 'text').map((b) => b.text));

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('a compaction call', () => {
  it('sends the conversation up to the cut with the compaction instruction last, the session’s system prompt and tools kept but no tool call allowed, and returns the summary priced', async () => {
    const model = 'priced';
    const log = logOf([...turnEvents(1, 'buy milk'), ...turnEvents(2, 'buy bread'), { type: 'turn/start', turn: 3, text: 'question 3' }]);
    llm().scriptCompaction(model, { kind: 'tool_calls', text: 'Turns 1 and 2 read two shopping lists: milk, bread.', calls: [{ name: 'read_file', input: { path: 'x' } }], usage: { inputTokens: 1_000_000, outputTokens: 0 } });
    const callLlm = activityFor(log);

    const answer = await callLlm({ model: `anthropic:${model}`, turn: 3, uptoSeq: endOf(log, 2) + 1, purpose: 'compact' });

    expect(answer).toMatchObject({ text: 'Turns 1 and 2 read two shopping lists: milk, bread.', toolCalls: [], costUsd: 3 });
    expect(answer.providerData).toBeUndefined();
    const body = sentBody(model);
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: [expect.objectContaining({ type: 'text', text: COMPACTION_INSTRUCTION })] });
    expect(textsOf(body)).toEqual(['question 1', 'answer 1', 'question 2', 'answer 2', COMPACTION_INSTRUCTION]);
    expect(body.system).toBe('You are terse.');
    expect(body.tools).toHaveLength(1);
    expect(body.tool_choice).toEqual({ type: 'none' });
    expect(llm().requests({ model }).at(-1)?.purpose).toBe('compact');
  });

  it('applies an earlier compaction: the summary it made comes first, in a run whose log starts above seq 0', async () => {
    const model = modelName('recompact');
    const first = logOf(turnEvents(1, 'buy milk'));
    const compacted = logOf([{ type: 'context/compacted', turn: 1, throughSeq: endOf(first, 1), summary: 'Turn 1 read f1.txt: buy milk.', tokensBefore: 900, tokensAfter: 100 }, ...turnEvents(2, 'buy bread')], first);
    // The next run carries only what follows the compaction's cut.
    const carried = new SessionLog(compacted.events.filter((e) => e.seq > endOf(first, 1)));
    expect(carried.firstSeq).toBe(endOf(first, 1) + 1);
    const callLlm = activityFor(carried);

    const answer = await callLlm({ model: `anthropic:${model}`, turn: 2, uptoSeq: endOf(carried, 2) + 1, purpose: 'compact' });

    expect(answer.text).toMatch(/^Summary by the scripted LLM/);
    expect(textsOf(sentBody(model))).toEqual([`${SUMMARY_PREFIX}Turn 1 read f1.txt: buy milk.\n\nquestion 2`, 'answer 2', COMPACTION_INSTRUCTION]);
  });

  it('fails as unknown, never retried, when the answer has no text to be the summary', async () => {
    const model = modelName('empty-summary');
    const log = logOf(turnEvents(1, 'buy milk'));
    llm().scriptCompaction(model, { kind: 'text', text: '  \n' }, { kind: 'empty' });
    const callLlm = activityFor(log);

    for (let i = 0; i < 2; i++) {
      const error = await failureOf(callLlm({ model: `anthropic:${model}`, turn: 2, uptoSeq: endOf(log, 1) + 1, purpose: 'compact' }));
      expect(error).toBeInstanceOf(ApplicationFailure);
      expect(error).toMatchObject({ type: 'unknown', nonRetryable: true, message: expect.stringContaining('has no text to use as the summary') });
    }
    expect(llm().requests({ model, purpose: 'compact' })).toHaveLength(2);
  });
});

describe('the answer of a compaction call', () => {
  it('keeps the text and drops tool calls and provider data, from a compatible server that ignored the tool choice', () => {
    const message: AssistantMessage = {
      role: 'assistant',
      text: 'The summary.',
      toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'x' } }],
      stopReason: 'tool_use',
      usage: USAGE,
      providerData: { provider: 'anthropic', thinking: [{ type: 'thinking', thinking: 'about reading x', signature: 'sig' }] },
    };
    const answer = compactionAnswer(message, 'anthropic');
    expect(answer).toEqual({ role: 'assistant', text: 'The summary.', toolCalls: [], stopReason: 'tool_use', usage: USAGE });
  });
});

describe('a step call', () => {
  const big = 'z'.repeat(5_000);

  it('sends the large tool results of turns more than clearToolResultsAfter before its own as one line, and the others whole', async () => {
    const model = modelName('cleared');
    const log = logOf([...turnEvents(1, big), ...turnEvents(2, big), ...turnEvents(3, 'small'), { type: 'turn/start', turn: 4, text: 'question 4' }]);
    llm().script(model, { kind: 'text', text: 'ok' });

    await activityFor(log)({ model: `anthropic:${model}`, turn: 4, uptoSeq: log.nextSeq, clearToolResultsAfter: 2 });

    const body = sentBody(model);
    const results = body.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result').map((b) => b.content));
    expect(results).toEqual([clearedResultLine('read_file', 'toolu_1', 5_000), big, 'small']);
    expect(textsOf(body).at(-1)).toBe('question 4');
  });

  it('sends every tool result whole without clearToolResultsAfter, and no compaction instruction', async () => {
    const model = modelName('uncleared');
    const log = logOf([...turnEvents(1, big), { type: 'turn/start', turn: 9, text: 'question 9' }]);
    llm().script(model, { kind: 'text', text: 'ok' });

    await activityFor(log)({ model: `anthropic:${model}`, turn: 9, uptoSeq: log.nextSeq });

    const body = sentBody(model);
    expect(body.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result').map((b) => b.content))).toEqual([big]);
    expect(textsOf(body)).not.toContain(COMPACTION_INSTRUCTION);
    expect(llm().requests({ model }).at(-1)?.purpose).toBe('step');
  });
});
