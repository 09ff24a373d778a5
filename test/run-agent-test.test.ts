import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { msToTs, optionalTsToMs } from '@temporalio/common/lib/time';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { overloaded, runAgentTest, startFakeModel, text, toolCall, type FakeModel } from '../testing';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { createDevServerEnv, createTimeSkippingEnv, devServerAddress, testServerPath } from './temporal-env';

/**
 * runAgentTest of durable-agent-worker/testing on a real TestWorkflowEnvironment: the
 * run's shared dev server (what `createLocal` gives a user) and a time-skipping server of
 * its own. Each run starts a real worker against the fake model over HTTP.
 *
 * The example of docs/testing.md, a test file of a user's own, runs here as written: its
 * package imports pointed at this tree, its time-skipping server started from the project's
 * binary instead of a download. Imported while this file is collected, its tests are this
 * file's own.
 */
const docExample = await writeDocExample();
try {
  await import(docExample);
} finally {
  await rm(path.dirname(docExample), { recursive: true, force: true });
}

async function writeDocExample(): Promise<string> {
  const doc = await readFile(path.join(PROJECT_ROOT, 'docs', 'testing.md'), 'utf8');
  const block = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '').find((text) => text.startsWith('// support-agent.test.ts\n'));
  if (block === undefined) throw new Error('docs/testing.md has no ts block starting "// support-agent.test.ts"');
  const pointed = [
    ["'durable-agent-worker/testing'", JSON.stringify(path.join(PROJECT_ROOT, 'testing', 'index.ts'))],
    ["'durable-agent-worker'", JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))],
    ['TestWorkflowEnvironment.createTimeSkipping()', `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: ${JSON.stringify(testServerPath())} } } })`],
  ].reduce((text, [from = '', to = '']) => {
    if (!text.includes(from)) throw new Error(`docs/testing.md's example no longer has ${from}`);
    return text.replaceAll(from, to);
  }, block);
  // Inside the project, so the example's own imports (vitest, zod, @temporalio/testing) resolve from its node_modules.
  await mkdir(path.join(PROJECT_ROOT, '.data'), { recursive: true });
  const file = path.join(await mkdtemp(path.join(PROJECT_ROOT, '.data', 'testing-doc-')), 'support-agent.ts');
  await writeFile(file, pointed);
  return file;
}
let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(async () => {
  await model?.close();
});

describe('runAgentTest on a local server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createDevServerEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it("runs a turn that calls a tool and answers, and returns the outcome, the answer, the log and the model's requests", async () => {
    model.reply(toolCall('calculator', { expression: '6 * 7' }), text('It is 42.'));
    const run = await runAgentTest({ env, model, message: 'What is six times seven?', session: { tools: ['calculator'] }, provider: 'openai' });
    expect(run.outcome).toMatchObject({ status: 'completed', turn: 1 });
    expect(run.answer).toBe('It is 42.');
    expect(run.log.filter((e) => e.type === 'tool/result')).toMatchObject([{ name: 'calculator', code: 'ok', content: expect.stringContaining('42') }]);
    const requests = model.requests().slice(-2);
    expect(requests).toMatchObject([{ provider: 'openai', replyKind: 'tool_calls' }, { provider: 'openai', replyKind: 'text' }]);
    expect(JSON.stringify(requests[1]?.body)).toContain('What is six times seven?');
    expect(model.pending()).toBe(0);
    // The session was ended: the run leaves nothing running.
    expect((await env.client.workflow.getHandle(run.workflowId).describe()).status.name).toBe('COMPLETED');
  });

  it('registers the search attributes the session writes on a namespace that lacks them', async () => {
    const namespace = `agent-test-${randomUUID()}`;
    await env.connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const fresh = await TestWorkflowEnvironment.createFromExistingServer({ address: devServerAddress(), namespace });
    try {
      model.reply(text('Registered.'));
      const run = await runAgentTest({ env: fresh, model, message: 'hello' });
      expect(run.answer).toBe('Registered.');
      const { customAttributes } = await fresh.connection.operatorService.listSearchAttributes({ namespace });
      expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(AGENT_SEARCH_ATTRIBUTES.map((key) => key.name)));
    } finally {
      await fresh.teardown();
    }
  });

  it('returns a failed turn as an outcome, with the failure the worker gave it', async () => {
    const run = await runAgentTest({ env, model, message: 'hello', session: { retryPolicy: null } });
    expect(run.outcome).toMatchObject({ status: 'failed', failure: { type: 'invalid_request' } });
    expect(run.answer).toBeUndefined();
    expect(model.requests().at(-1)).toMatchObject({ replyKind: 'unscripted' });
  });
});

describe('runAgentTest on a time-skipping server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('waits out a 529 with Retry-After: 45 in server time, not on the clock', async () => {
    model.reply(overloaded({ retryAfterS: 45 }), text('Back again.'));
    const started = Date.now();
    const run = await runAgentTest({ env, model, message: 'hello' });
    expect(run.outcome.status).toBe('completed');
    expect(run.answer).toBe('Back again.');
    expect(Date.now() - started).toBeLessThan(30_000);
    const [first, second] = model.requests().slice(-2);
    expect(first?.replyKind).toBe('status');
    expect((second?.at ?? 0) - (first?.at ?? 0), 'the wait on the clock').toBeLessThan(15_000);
    // On the server's clock the call's last attempt started the stated 45 s after its first.
    const events = (await env.client.workflow.getHandle(run.workflowId).fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callLlm');
    const started2 = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString());
    expect(started2?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    expect((optionalTsToMs(started2?.eventTime) ?? 0) - (optionalTsToMs(scheduled?.eventTime) ?? 0)).toBeGreaterThanOrEqual(45_000 - 50);
    expect((await env.client.workflow.getHandle(run.workflowId).describe()).status.name).toBe('COMPLETED');
  });
});
