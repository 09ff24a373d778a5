import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { cancelTurnUpdate, sendUpdate, stateQuery } from '../contracts/api';
import type { SessionEvent } from '../contracts/session-log';
import { clientEnvOf, useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';
import { runInProcess } from './support/cli-in-process';
import { spawnEntry } from './support/spawn-cli';
import { eventually } from './support/eventually';
import { EVERYTHING_SERVER, filesystemServer, writeMcpConfig } from './support/mcp/servers';

const CRASHY_TITLE = `mcp-crashy-${randomUUID()}`;
let files: string;
let config: string;

beforeAll(async () => {
  process.env.MCP_GREETING_SOURCE = 'from-the-worker';
  // In the worker's environment, but not given to any server.
  process.env.MCP_PRIVATE_CANARY = 'canary-value';
  files = await mkdtemp(path.join(tmpdir(), 'mcp-fs-'));
  await mkdir(path.join(files, 'notes'));
  await writeFile(path.join(files, 'notes', 'a.txt'), 'alpha');
  await writeFile(path.join(files, 'notes', 'b.txt'), 'beta');
  config = await writeMcpConfig({
    everything: { ...EVERYTHING_SERVER, env: { GREETING: 'hello-${MCP_GREETING_SOURCE}' } },
    fs: filesystemServer(files),
    // The same server with the lanes of two tools overridden.
    fsswapped: { ...filesystemServer(files), sideEffecting: ['read_text_file'], readOnly: ['write_file'] },
    // The same server under a title the test can find its process by, to kill it.
    crashy: { command: EVERYTHING_SERVER.command, args: [`--title=${CRASHY_TITLE}`, ...EVERYTHING_SERVER.args] },
  });
}, 60_000);
// Started once the MCP config exists.
const h = useAgentHarness(() => ({ env: { AGENT_MCP_CONFIG: config } }));

let models = 0;
const newModel = (name: string) => `mcp-${name}-${++models}-${Date.now()}`;
/** The CLI's process, as a user starts it: for the first command line here, so the process around it stays proven. */
const cliProcess = (...args: string[]) => runEntry('client/main.ts', args, clientEnvOf(h()));
/** The same command line in this process (client/command-line.ts, as the CLI runs it): the rest, without a process start each. */
const cli = (...args: string[]) => runInProcess(args, clientEnvOf(h()));

function start(model: string, mcp: string[], extra: Record<string, unknown> = {}): Promise<SessionHandle> {
  return startSession(h().client, { AGENT_TASK_QUEUE: h().taskQueue }, { model: `anthropic:${model}`, mcp, ...extra });
}

const results = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/result' ? [{ callId: e.callId, name: e.name, code: e.code, content: e.content }] : []));
const calls = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));

/** The tool names the scripted LLM was offered in each request of `model`, in order. */
const offered = (model: string) => h().llm.requests({ model }).map((r) => ((r.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name));

/** The activity summaries of the session's history, in the order they were scheduled. */
async function activitySummaries(handle: SessionHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  const summaries: string[] = [];
  for (const event of history.events ?? []) {
    const data = event.userMetadata?.summary?.data;
    if (event.activityTaskScheduledEventAttributes && data) summaries.push(JSON.parse(Buffer.from(data).toString('utf8')) as string);
  }
  return summaries;
}

describe('MCP tools from real servers over stdio', () => {
  it("offers the everything server's tools as mcp__everything__*, records the list once in the log, and the model's echo call returns the echoed text", async () => {
    const model = newModel('echo');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_echo', name: 'mcp__everything__echo', input: { message: 'hello over MCP' } }] },
      { kind: 'text', text: 'It echoed.' },
    );
    const session = await start(model, ['everything']);
    expect(await sendAndWait(session, 'echo something')).toMatchObject({ status: 'completed' });

    const events = await readLog(session);
    expect(results(events)).toEqual([{ callId: 'toolu_echo', name: 'mcp__everything__echo', code: 'ok', content: 'Echo: hello over MCP' }]);
    const lists = events.filter((e) => e.type === 'tools/listed');
    expect(lists).toHaveLength(1);
    expect(lists[0]).toMatchObject({ servers: ['everything'] });
    // Both requests of the turn offered the recorded tools beside the built-in ones.
    for (const names of offered(model)) expect(names).toEqual(expect.arrayContaining(['calculator', 'mcp__everything__echo', 'mcp__everything__trigger-long-running-operation']));
    expect(await activitySummaries(session)).toEqual(['mcp tools of everything', `step 1 · llm anthropic:${model}`, 'step 1 · mcp everything/echo #toolu_echo', `step 2 · llm anthropic:${model}`]);

    // `log` shows the listing and the call like a built-in one.
    const log = await cliProcess('log', session.workflowId);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toMatch(/turn 1 · MCP tools listed: \d+ from everything/);
    expect(log.stdout).toMatch(/→ mcp__everything__echo \{"message":"hello over MCP"\} #toolu_echo/);
    expect(log.stdout).toMatch(/✓ mcp__everything__echo: Echo: hello over MCP #toolu_echo/);
  });

  it('gives the model an error result for a tool that reports isError, for arguments its inputSchema refuses (by the worker, before the server) and for an unknown MCP tool', async () => {
    const model = newModel('errors');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          // The server cannot fetch this and answers with isError.
          { id: 'toolu_iserror', name: 'mcp__everything__gzip-file-as-resource', input: { name: 'x.gz', data: 'http://127.0.0.1:1/nothing' } },
          { id: 'toolu_badargs', name: 'mcp__everything__echo', input: { message: 42 } },
          { id: 'toolu_unknown', name: 'mcp__everything__no_such_tool', input: {} },
        ],
      },
      { kind: 'text', text: 'Noted.' },
    );
    const session = await start(model, ['everything']);
    expect(await sendAndWait(session, 'try these')).toMatchObject({ status: 'completed' });

    const events = await readLog(session);
    const byId = Object.fromEntries(results(events).map((r) => [r.callId, r]));
    expect(byId.toolu_iserror).toMatchObject({ code: 'error', content: expect.stringMatching(/fetch failed/) });
    expect(byId.toolu_badargs).toMatchObject({ code: 'error', content: expect.stringMatching(/invalid arguments for "mcp__everything__echo"[\s\S]*message/) });
    expect(byId.toolu_unknown).toMatchObject({ code: 'error', content: expect.stringMatching(/no tool named "mcp__everything__no_such_tool"/) });
    // The refused arguments went to the worker, which checks them before the server could see
    // them (mcp-hostile.test.ts watches a server's side); the unknown tool went nowhere.
    expect(calls(events)).toEqual(['toolu_iserror', 'toolu_badargs']);
  });

  it("starts a stdio server with its env (${VAR} from the worker's environment) and the usual basics, not the worker's whole environment", async () => {
    const model = newModel('env');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_env', name: 'mcp__everything__get-env', input: {} }] }, { kind: 'text', text: 'Seen.' });
    const session = await start(model, ['everything']);
    expect(await sendAndWait(session, 'show env')).toMatchObject({ status: 'completed' });
    const [result] = results(await readLog(session));
    expect(result?.content).toMatch(/"GREETING": "hello-from-the-worker"/);
    expect(result?.content).toMatch(/"PATH"/);
    expect(result?.content).not.toMatch(/canary-value/);
  });

  it('keeps images and resources out of history as placeholders with their type and size, and structured content as JSON', async () => {
    const model = newModel('content');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_image', name: 'mcp__everything__get-tiny-image', input: {} },
          { id: 'toolu_struct', name: 'mcp__everything__get-structured-content', input: { location: 'Chicago' } },
          { id: 'toolu_resource', name: 'mcp__everything__get-resource-reference', input: { resourceType: 'Blob', resourceId: 2 } },
          { id: 'toolu_links', name: 'mcp__everything__get-resource-links', input: { count: 2 } },
        ],
      },
      { kind: 'text', text: 'Seen.' },
    );
    const session = await start(model, ['everything']);
    expect(await sendAndWait(session, 'show me')).toMatchObject({ status: 'completed' });
    const byId = Object.fromEntries(results(await readLog(session)).map((r) => [r.callId, r]));
    expect(byId.toolu_image?.content).toMatch(/^Here's the image you requested:\n\[image image\/png, \d+ bytes\]/);
    expect(byId.toolu_image?.content).not.toMatch(/iVBOR/);
    expect(JSON.parse(byId.toolu_struct?.content ?? '')).toMatchObject({ conditions: expect.any(String) });
    // The blob is `Resource 2: This is a base64 blob created at <local time>`: 55 bytes before 10 o'clock, 56 after.
    expect(byId.toolu_resource?.content).toMatch(/\[resource demo:\/\/\S+ text\/plain, 5[56] bytes\]/);
    expect(byId.toolu_links?.content).toMatch(/\[resource link \S+[^\]]*\][\s\S]*\[resource link /);
  });

  it('cancels a long-running tool with progress: watch shows it running, and the turn ends cancelled within seconds, not after the tool’s 60 s', async () => {
    const model = newModel('cancel');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_long', name: 'mcp__everything__trigger-long-running-operation', input: { duration: 60, steps: 60 } }] });
    const session = await start(model, ['everything']);
    const send = session.executeUpdate(sendUpdate, { args: [{ text: 'run it' }] }).then(
      (o) => o.status,
      () => 'rejected',
    );
    await eventually('the long call to start', async () => (calls(await readLog(session)).includes('toolu_long') ? true : undefined), 30_000);
    // Let it report some progress (a heartbeat) first.
    await eventually('the call to run', async () => ((await session.describe()).raw.pendingActivities?.some((a) => a.heartbeatDetails) ? true : undefined), 15_000);
    const watch = spawnEntry('client/main.ts', ['watch', session.workflowId, '--until-idle'], clientEnvOf(h()));
    try {
      await watch.waitFor(/→ mcp__everything__trigger-long-running-operation \{"duration":60,"steps":60\} #toolu_long/);
      await watch.waitFor(/turn 1 · step 1\/\d+ · tool · running/);
    } finally {
      watch.kill();
    }
    const cancelledAt = Date.now();
    await session.executeUpdate(cancelTurnUpdate);
    expect(await send).toBe('rejected');
    expect(Date.now() - cancelledAt).toBeLessThan(15_000);
    const events = await readLog(session);
    expect(events.filter((e) => e.type === 'turn/end').at(-1)).toMatchObject({ status: 'cancelled' });
    expect(results(events)).toEqual([expect.objectContaining({ callId: 'toolu_long', code: 'TOOL_OUTCOME_UNKNOWN' })]);
  }, 60_000);
});

/** The pids of the `crashy` servers this test's worker started (found by their unique title, killed by id). */
function crashyPids(): number[] {
  try {
    return execFileSync('pgrep', ['-f', CRASHY_TITLE], { encoding: 'utf8' }).trim().split('\n').map(Number).filter((pid) => pid !== process.pid);
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}
const crashyPid = () => crashyPids()[0];

describe('a stdio server that crashes', () => {
  it('fails the call running on it as mcp_unavailable; the retry of that read-only call opens a new connection and completes', async () => {
    const model = newModel('crashy');
    h().llm.script(
      model,
      { kind: 'tool_calls', calls: [{ id: 'toolu_pre', name: 'mcp__crashy__echo', input: { message: 'before' } }] },
      { kind: 'tool_calls', calls: [{ id: 'toolu_long', name: 'mcp__crashy__trigger-long-running-operation', input: { duration: 3, steps: 3 } }] },
      { kind: 'text', text: 'survived' },
    );
    const session = await start(model, ['crashy']);
    const send = sendAndWait(session, 'go');
    await eventually('the long call to be recorded', async () => (calls(await readLog(session)).includes('toolu_long') ? true : undefined), 30_000);
    const first = await eventually('the server process', () => crashyPid(), 5_000);
    process.kill(first, 'SIGKILL');
    expect(await send).toMatchObject({ status: 'completed' });

    const byId = Object.fromEntries(results(await readLog(session)).map((r) => [r.callId, r]));
    expect(byId.toolu_long).toMatchObject({ code: 'ok', content: expect.stringMatching(/Long running operation completed/) });
    const second = crashyPid();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const history = await session.fetchHistory();
    const retried = (history.events ?? []).find((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    expect(retried?.activityTaskStartedEventAttributes?.lastFailure?.applicationFailureInfo?.type).toBe('mcp_unavailable');
  }, 60_000);
});

describe('connections to stdio servers', () => {
  it('are one per server per worker, shared by sessions, stopped with the worker and started again by the next call', async () => {
    const echo = async (text: string) => {
      const model = newModel('shared');
      h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_shared', name: 'mcp__crashy__echo', input: { message: text } }] }, { kind: 'text', text: 'ok' });
      const session = await start(model, ['crashy']);
      expect(await sendAndWait(session, text)).toMatchObject({ status: 'completed' });
      expect(results(await readLog(session))).toEqual([expect.objectContaining({ code: 'ok', content: `Echo: ${text}` })]);
    };
    await echo('first session');
    await echo('second session');
    expect(crashyPids()).toHaveLength(1);

    await h().stopWorker();
    await eventually('the server to stop with the worker', () => (crashyPids().length === 0 ? true : undefined), 10_000);
    await h().startWorker();
    await echo('after a restart');
    expect(crashyPids()).toHaveLength(1);
  }, 90_000);
});

describe('the filesystem server', () => {
  it('runs read_text_file calls in the read-only lane, in parallel', async () => {
    const model = newModel('read');
    h().llm.script(
      model,
      {
        kind: 'tool_calls',
        calls: [
          { id: 'toolu_ra', name: 'mcp__fs__read_text_file', input: { path: path.join(files, 'notes', 'a.txt') } },
          { id: 'toolu_rb', name: 'mcp__fs__read_text_file', input: { path: path.join(files, 'notes', 'b.txt') } },
        ],
      },
      { kind: 'text', text: 'Read both.' },
    );
    const session = await start(model, ['fs']);
    expect(await sendAndWait(session, 'read the notes')).toMatchObject({ status: 'completed' });
    const byId = Object.fromEntries(results(await readLog(session)).map((r) => [r.callId, r]));
    expect(byId.toolu_ra).toMatchObject({ code: 'ok', content: 'alpha' });
    expect(byId.toolu_rb).toMatchObject({ code: 'ok', content: 'beta' });

    // Both activities were scheduled before either completed, with the read-only retry policy.
    const history = await session.fetchHistory();
    const kinds = (history.events ?? []).flatMap((e) =>
      e.activityTaskScheduledEventAttributes?.activityType?.name === 'callMcpTool'
        ? [`scheduled:${e.activityTaskScheduledEventAttributes.retryPolicy?.maximumAttempts}`]
        : e.activityTaskCompletedEventAttributes
          ? ['completed']
          : [],
    );
    const first = kinds.indexOf('scheduled:3');
    expect(kinds.slice(first, first + 3)).toEqual(['scheduled:3', 'scheduled:3', 'completed']);
  });

  it("puts the tools the config names in readOnly and sideEffecting in those lanes, whatever their readOnlyHint says", async () => {
    const model = newModel('lanes');
    h().llm.script(model, { kind: 'text', text: 'Listed.' });
    const session = await start(model, ['fs', 'fsswapped']);
    expect(await sendAndWait(session, 'list')).toMatchObject({ status: 'completed' });
    const listed = (await readLog(session)).find((e) => e.type === 'tools/listed');
    const lane = (name: string) => (listed?.type === 'tools/listed' ? listed.tools.find((t) => t.name === name)?.lane : undefined);
    expect([lane('mcp__fs__read_text_file'), lane('mcp__fs__write_file')]).toEqual(['read_only', 'side_effecting']);
    expect([lane('mcp__fsswapped__read_text_file'), lane('mcp__fsswapped__write_file')]).toEqual(['side_effecting', 'read_only']);
    // A tool without an override keeps its hint.
    expect(lane('mcp__fsswapped__list_directory')).toBe('read_only');
  });

  it('holds write_file (side-effecting) for approval under --approve-tools mcp__fs__*, then writes once with one attempt', async () => {
    const model = newModel('write');
    const target = path.join(files, 'out.txt');
    h().llm.script(model, { kind: 'tool_calls', calls: [{ id: 'toolu_write', name: 'mcp__fs__write_file', input: { path: target, content: 'written over MCP' } }] }, { kind: 'text', text: 'Wrote it.' });
    const started = await cli('start', '--model', `anthropic:${model}`, '--mcp', 'fs', '--approve-tools', 'mcp__fs__*', '--json');
    expect(started.code, started.stderr).toBe(0);
    const id = String((JSON.parse(started.stdout) as { workflowId: string }).workflowId);
    const session = h().client.workflow.getHandle(id);
    const send = session.executeUpdate(sendUpdate, { args: [{ text: 'write it' }] });
    await eventually('the write to wait for approval', async () => ((await session.query(stateQuery)).pendingApprovals.some((p) => p.callId === 'toolu_write') ? true : undefined), 30_000);
    await expect(readFile(target, 'utf8')).rejects.toThrow(/ENOENT/);

    const approved = await cli('approve', id, 'toolu_write');
    expect(approved.code, approved.stderr).toBe(0);
    await send;
    expect(await readFile(target, 'utf8')).toBe('written over MCP');
    expect(results(await readLog(session))).toEqual([expect.objectContaining({ callId: 'toolu_write', code: 'ok' })]);
    const history = await session.fetchHistory();
    const write = (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callMcpTool');
    expect(write?.activityTaskScheduledEventAttributes?.retryPolicy?.maximumAttempts).toBe(1);
  });
});
