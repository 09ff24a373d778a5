import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkSession, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { workflowBundle } from '../harness/local-agent';
import { cancelTurnUpdate, sendUpdate, stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { eventually } from './support/eventually';
import { startFailingHttpServer, startHttpMcpServer, writeMcpConfig, type TestHttpMcpServer } from './support/mcp/servers';

let server: TestHttpMcpServer;
/** A second instance, whose list the clash test breaks for good. */
let clashing: TestHttpMcpServer;
let failing: Awaited<ReturnType<typeof startFailingHttpServer>>;
let configFile: string;

const TOKEN = `mcp-secret-${Date.now()}`;

beforeAll(async () => {
  process.env.MCP_TEST_TOKEN = TOKEN;
  [server, clashing, failing] = await Promise.all([startHttpMcpServer(), startHttpMcpServer(), startFailingHttpServer()]);
  const node = process.execPath;
  configFile = await writeMcpConfig({
    // The token is the worker's variable: it reaches the server, never history.
    remote: { url: server.url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } },
    clashing: { url: clashing.url },
    impatient: { url: server.url, timeoutMs: 1000 },
    missing: { command: 'no-such-mcp-server-7c1e' },
    exits: { command: node, args: ['-e', "console.error('cannot start: no database'); process.exit(3)"] },
    garbage: { command: node, args: ['-e', "console.log('this is not JSON-RPC'); setInterval(() => {}, 1000)"], timeoutMs: 2000 },
    // A key in the query string stays out of failure messages.
    broken: { url: `${failing.url}?key=query-secret` },
  });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await clashing?.close();
  await failing?.close();
});
// Registered after the MCP setup: started once its config exists, closed before its servers stop.
const h = useAgentHarness(() => ({ env: { AGENT_MCP_CONFIG: configFile } }));

let models = 0;
const newModel = (name: string) => `mcp-http-${name}-${++models}-${Date.now()}`;
/** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));

function start(model: string, mcp: string[], extra: { continueAsNewAfterEvents?: number } = {}): Promise<SessionHandle> {
  return startSession(h().client, { AGENT_TASK_QUEUE: h().taskQueue }, { model: `anthropic:${model}`, mcp, ...extra });
}

const results = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, code: e.code, content: e.content }] : []));
/** The MCP tool names the scripted LLM was offered in each request of `model`, in order. */
const offeredMcp = (model: string) =>
  h().llm.requests({ model }).map((r) => ((r.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name).filter((n) => n.startsWith('mcp__')).sort());

describe('MCP tools over Streamable HTTP', () => {
  it('keeps offering the recorded list when the server changes its tools, also to a retried LLM call and on replay; after refresh-tools the new list is used', async () => {
    const model = newModel('lists');
    const tag = `added_${models}`;
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_first', name: 'mcp__remote__first', input: {} },
          { id: 'toolu_structured', name: 'mcp__remote__structured', input: {} },
        ],
      },
      { kind: 'text', text: 'one' },
      // Turn 2: a retried failure, then an answer.
      { kind: 'status', status: 529 },
      { kind: 'text', text: 'two' },
      // Turn 3, after refresh-tools.
      { kind: 'tool_calls', calls: [{ id: 'toolu_added', name: `mcp__remote__${tag}`, input: {} }] },
      { kind: 'text', text: 'three' },
    );
    const session = await start(model, ['remote']);
    expect(await sendAndWait(session, 'turn one')).toMatchObject({ status: 'completed' });
    const before = ['mcp__remote__first', 'mcp__remote__huge', 'mcp__remote__slow_write', 'mcp__remote__structured', 'mcp__remote__wait'];
    expect(offeredMcp(model)).toEqual([before, before]);

    await server.addTool(tag);
    expect(await sendAndWait(session, 'turn two')).toMatchObject({ status: 'completed' });
    // The 529 and its retry both offered the list recorded at the start.
    expect(offeredMcp(model).slice(2)).toEqual([before, before]);

    const refreshed = await cliProcess('refresh-tools', session.workflowId);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshed.stdout).toMatch(new RegExp(`mcp__remote__${tag}`));
    expect(await sendAndWait(session, 'turn three')).toMatchObject({ status: 'completed' });
    const after = [...before, `mcp__remote__${tag}`].sort();
    expect(offeredMcp(model).slice(4)).toEqual([after, after]);
    // The two read-only calls of turn one run at once, so their results are logged as they finish.
    const byCall = (a: { callId: string }, b: { callId: string }) => a.callId.localeCompare(b.callId);
    expect(results(await readLog(session)).sort(byCall)).toEqual([
      { callId: 'toolu_added', code: 'ok', content: `${tag} answered` },
      { callId: 'toolu_first', code: 'ok', content: 'first answered' },
      // Structured content without a text copy is kept as JSON.
      { callId: 'toolu_structured', code: 'ok', content: '{"n":7}' },
    ]);
    expect((await readLog(session)).filter((e) => e.type === 'tools/listed')).toHaveLength(2);

    // The header from ${MCP_TEST_TOKEN} reached the server, and no trace of the token is in history.
    expect(await server.events()).toContain(`authorization Bearer ${TOKEN}`);
    expect(JSON.stringify(await session.fetchHistory())).not.toContain(TOKEN);
    // The whole history replays against the workflow code without asking any server.
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, await session.fetchHistory())).resolves.toBeUndefined();
  }, 90_000);

  it('carries the recorded list into the next run when the session continues as new, without listing again', async () => {
    const model = newModel('can');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_can1', name: 'mcp__remote__first', input: {} }] },
      { kind: 'text', text: 'run one' },
      { kind: 'tool_calls', calls: [{ id: 'toolu_can2', name: 'mcp__remote__first', input: {} }] },
      { kind: 'text', text: 'run two' },
    );
    const session = await start(model, ['remote'], { continueAsNewAfterEvents: 20 });
    expect(await sendAndWait(session, 'one')).toMatchObject({ status: 'completed' });
    expect(await sendAndWait(session, 'two')).toMatchObject({ status: 'completed' });
    expect((await session.query(stateQuery)).runs).toBeGreaterThanOrEqual(2);
    const offered = offeredMcp(model);
    expect(offered.slice(2)).toEqual(offered.slice(0, 2));
    expect(results(await readLog(session)).map((r) => [r.callId, r.code])).toEqual([
      ['toolu_can1', 'ok'],
      ['toolu_can2', 'ok'],
    ]);
    // The log spans the runs: one list, recorded in the first.
    expect((await readLog(session)).filter((e) => e.type === 'tools/listed')).toHaveLength(1);
  }, 60_000);

  it('gives a fork the tools recorded in the log it carries, without listing again, and its calls reach the server', async () => {
    const model = newModel('fork');
    h().llm.script(model, { kind: 'text', text: 'source' });
    const source = await start(model, ['remote']);
    expect(await sendAndWait(source, 'hello')).toMatchObject({ status: 'completed' });
    const forkModel = newModel('forked');
    h().llm.script(forkModel, { kind: 'tool_calls', calls: [{ id: 'toolu_forked', name: 'mcp__remote__first', input: {} }] }, { kind: 'text', text: 'forked' });
    const fork = await forkSession(h().client, { AGENT_TASK_QUEUE: h().taskQueue }, source.workflowId, { model: `anthropic:${forkModel}` });
    expect(await sendAndWait(fork, 'go on')).toMatchObject({ status: 'completed' });
    expect(offeredMcp(forkModel)[0]).toEqual(offeredMcp(model)[0]);
    expect(results(await readLog(fork))).toEqual([{ callId: 'toolu_forked', code: 'ok', content: 'first answered' }]);
    const history = await fork.fetchHistory();
    expect((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'listMcpTools')).toHaveLength(0);
  }, 60_000);

  it('refuses a list in which two tools would share a name after the 64-character cut, in one line, and keeps the recorded list', async () => {
    const model = newModel('clash');
    h().llm.script(model, { kind: 'text', text: 'hi' }, { kind: 'text', text: 'hi again' });
    const session = await start(model, ['clashing']);
    expect(await sendAndWait(session, 'hello')).toMatchObject({ status: 'completed' });
    const long = `clash_${'x'.repeat(60)}`;
    await clashing.addTool(`${long}_one`);
    await clashing.addTool(`${long}_two`);

    const refreshed = await cli('refresh-tools', session.workflowId);
    expect(refreshed.code).toBe(1);
    expect(refreshed.stderr.trim().split('\n')).toHaveLength(1);
    expect(refreshed.stderr).toMatch(new RegExp(`two MCP tools would both be offered as "mcp__clashing__clash_x+": clashing/${long}_one and clashing/${long}_two`));
    expect((await readLog(session)).filter((e) => e.type === 'tools/listed')).toHaveLength(1);
    expect(await sendAndWait(session, 'still fine?')).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('sends the server an MCP cancellation when the turn is cancelled during a call', async () => {
    const model = newModel('cancel');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_wait', name: 'mcp__remote__wait', input: {} }] });
    const session = await start(model, ['remote']);
    const send = session.executeUpdate(sendUpdate, { args: [{ text: 'wait' }] }).catch(() => 'rejected');
    const seenBefore = (await server.events()).filter((e) => e === 'cancelled wait').length;
    await eventually('the server to run the call', async () => ((await server.events()).includes('call wait') ? true : undefined), 30_000);
    await session.executeUpdate(cancelTurnUpdate);
    expect(await send).toBe('rejected');
    await eventually('the server to see the cancellation', async () => ((await server.events()).filter((e) => e === 'cancelled wait').length > seenBefore ? true : undefined), 10_000);
    expect(results(await readLog(session))).toEqual([expect.objectContaining({ callId: 'toolu_wait', code: 'TOOL_OUTCOME_UNKNOWN' })]);
  }, 60_000);
});

describe('MCP calls that time out or answer too much', () => {
  it("ends a call at the server's timeoutMs with an MCP cancellation, as mcp_timeout, a read-only call after three attempts", async () => {
    const model = newModel('timeout');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_slow', name: 'mcp__impatient__wait', input: {} }] });
    const session = await start(model, ['impatient']);
    const cancelledBefore = (await server.events()).filter((e) => e === 'cancelled wait').length;
    const outcome = await sendAndWait(session, 'wait for it');
    expect(outcome).toMatchObject({ status: 'failed', failure: { type: 'mcp_timeout' } });
    expect(outcome.failure?.message).toMatch(/MCP server "impatient" \(http:.*\) did not answer the call within 1 s/);
    expect(results(await readLog(session))).toEqual([expect.objectContaining({ callId: 'toolu_slow', code: 'TOOL_OUTCOME_UNKNOWN' })]);
    await eventually('the server to see three cancellations', async () => ((await server.events()).filter((e) => e === 'cancelled wait').length - cancelledBefore === 3 ? true : undefined), 10_000);
  }, 60_000);

  it('cuts a 3 MiB result to its first 64 KiB with a note the model reads, after one run', async () => {
    const model = newModel('huge');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_huge', name: 'mcp__remote__huge', input: {} }] }, { kind: 'text', text: 'too big' });
    const session = await start(model, ['remote']);
    expect(await sendAndWait(session, 'give me everything')).toMatchObject({ status: 'completed' });
    expect(results(await readLog(session))).toEqual([{ callId: 'toolu_huge', code: 'ok', content: expect.stringMatching(/^x{65536}\n\n\[result cut at 65536 bytes of 3145728\]$/) }]);
    // Run once: the cut answer is a result, not a failure to retry.
    expect((await server.events()).filter((e) => e === 'call huge')).toHaveLength(1);
  }, 60_000);
});

describe('the tools command', () => {
  it('lists the built-in tools and the recorded MCP tools, each with its lane and, under --approve-tools, whether it waits, in either lane', async () => {
    const model = newModel('tools');
    h().llm.script(model, { kind: 'text', text: 'hi' });
    const started = await cli('start', '--model', `anthropic:${model}`, '--mcp', 'remote', '--approve-tools', 'mcp__remote__*', '--json');
    expect(started.code, started.stderr).toBe(0);
    const id = String((JSON.parse(started.stdout) as { workflowId: string }).workflowId);
    expect(await sendAndWait(h().client.workflow.getHandle(id), 'hello')).toMatchObject({ status: 'completed' });

    const listed = await cli('tools', id);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^calculator +read-only$/m);
    expect(listed.stdout).toMatch(/^write_file +side-effecting$/m);
    // The pattern names every tool of the server, so its read-only tools wait too.
    expect(listed.stdout).toMatch(/^mcp__remote__first +read-only, waits for approval {2}\(MCP remote\/first\)$/m);
    expect(listed.stdout).toMatch(/^mcp__remote__slow_write +side-effecting, waits for approval {2}\(MCP remote\/slow_write\)$/m);
    const json = await cli('tools', id, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      workflowId: id,
      tools: expect.arrayContaining([{ name: 'mcp__remote__wait', lane: 'read-only', approval: true, server: 'remote', tool: 'wait' }]),
    });
  }, 60_000);
});

describe('choosing servers', () => {
  it('start without --mcp chooses every server of the file AGENT_MCP_CONFIG names in the client environment; --mcp refuses a bad name in one line', async () => {
    const started = await runEntry('client/main.ts', ['start', '--model', 'anthropic:mcp-default', '--json'], { ...clientEnvOf(h()), AGENT_MCP_CONFIG: configFile });
    expect(started.code, started.stderr).toBe(0);
    const id = String((JSON.parse(started.stdout) as { workflowId: string }).workflowId);
    expect((await h().client.workflow.getHandle(id).query(stateQuery)).settings.mcp).toEqual(['remote', 'clashing', 'impatient', 'missing', 'exits', 'garbage', 'broken']);
    const without = await cli('start', '--model', 'anthropic:mcp-none', '--json');
    const none = String((JSON.parse(without.stdout) as { workflowId: string }).workflowId);
    expect((await h().client.workflow.getHandle(none).query(stateQuery)).settings.mcp).toBeUndefined();
    const nothing = await cli('refresh-tools', none);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/this session uses no MCP server \(start it with --mcp NAME\)/);

    const refused = await cli('start', '--model', 'anthropic:mcp-bad', '--mcp', 'my server');
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe('client: --mcp: an MCP server name has 1 to 32 letters, digits, _ or -');
  }, 60_000);
});

describe('MCP servers that cannot serve fail the turn with one typed line, and none hangs', () => {
  const cases = [
    { server: 'nosuch', type: 'mcp_unknown_server', line: /no MCP server "nosuch" in this worker's AGENT_MCP_CONFIG \(configured: remote, clashing, / },
    { server: 'missing', type: 'mcp_unavailable', line: /MCP server "missing" \(no-such-mcp-server-7c1e\) cannot start: command not found/ },
    { server: 'exits', type: 'mcp_unavailable', line: /MCP server "exits" .* is unavailable: .*Connection closed.*cannot start: no database/ },
    { server: 'garbage', type: 'mcp_timeout', line: /MCP server "garbage" .* did not complete the MCP handshake within 2 s; it said: .*not valid JSON/ },
    { server: 'broken', type: 'mcp_unavailable', line: /MCP server "broken" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) is unavailable: HTTP 500: / },
  ];
  for (const c of cases) {
    it(`${c.server}: ${c.type}`, async () => {
      const model = newModel(c.server);
      h().llm.script(model, { kind: 'text', text: 'never asked' });
      const session = await start(model, [c.server]);
      const began = Date.now();
      const outcome = await sendAndWait(session, 'hello');
      expect(Date.now() - began).toBeLessThan(30_000);
      expect(outcome).toMatchObject({ status: 'failed', failure: { type: c.type } });
      expect(outcome.failure?.message).toMatch(c.line);
      expect(outcome.failure?.message).not.toMatch(/\n/);
      expect(outcome.failure?.message).not.toMatch(/query-secret/);
      // The model was never called: a session cannot offer tools it could not list.
      expect(h().llm.requests({ model })).toHaveLength(0);
    }, 60_000);
  }
});
