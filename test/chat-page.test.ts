/**
 * The chat page (gateway/page/, docs/chat-page.md) in a real browser, Debian's chromium
 * driven by playwright-core (never a browser download), against a real gateway, a real
 * worker process on the embedded live stream, and the scripted LLM as the model. One
 * browser, gateway and worker for the file; each test opens the page in a fresh context,
 * so the tab's sessionStorage starts empty.
 *
 * The model's stream is held after its first piece (`holdMidStream`) where a test needs the
 * page caught mid-answer: what the page shows then is what it had before the rest existed.
 * It is held before its first piece too (`hold`) until the page follows the session.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseLiveStreamEnv } from '../config/live-stream';
import { startLocalGateway, type LocalGateway } from '../harness/gateway';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import type { WorkerProcess } from '../harness/worker-process';
import { agentWorkerEnv } from '../harness/worker-env';
import { createLiveStreamSubscriber } from '../streaming/index';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { devServerAddress, devServerNamespace } from './temporal-env';
import { eventually } from './support/eventually';
import { startWorkerProcess } from './support/worker-processes';

/** Debian's package puts it here; CHROMIUM_PATH points elsewhere (another distribution, a local build). */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SCREENSHOT = path.join(PROJECT_ROOT, 'test-results', 'chat-page.png');
const MODEL = `chat-page-${randomUUID().slice(0, 8)}`;
/** An agent of test/support/agents-worker.ts: calculator, and write_file waiting for approval. */
const AGENT = 'helper';
/** Long enough for a step on a busy 2-core machine; a barrier that never opens fails by this, not by vitest's limit. */
const WAIT_MS = 20_000;

let dir: string;
let llm: ScriptedLlm;
let gateway: LocalGateway;
let worker: WorkerProcess;
let browser: Browser;

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `no chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH; this test never downloads a browser`).toBe(true);
  dir = await mkdtemp(path.join(tmpdir(), 'chat-page-'));
  const taskQueue = `chat-page-${randomUUID()}`;
  const live = { AGENT_LIVE_STREAM: 'embedded', AGENT_LIVE_STREAM_SOCKET: path.join(dir, 'live.sock') };
  llm = await startScriptedLlm({ demo: false });
  // The gateway listens on the socket first, so the worker's first connection finds it.
  const subscriber = await createLiveStreamSubscriber(parseLiveStreamEnv(live));
  const uiUrl = inject('temporalUiUrl');
  [gateway, worker, browser] = await Promise.all([
    startLocalGateway({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, subscriber, ...(uiUrl ? { uiUrl } : {}) }),
    startWorkerProcess(
      'chat-page',
      agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url, workspace: dir, extra: { ...live, AGENTS_WORKER_MODEL: MODEL } }),
      { entry: 'test/support/agents-worker.ts' },
    ),
    // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.kill();
  await gateway?.close();
  await llm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Requests the page made to anywhere but the gateway: there must be none (no CDN, nothing fetched from outside). */
const elsewhere: string[] = [];

/** The page in a fresh tab, its key given in the fragment as `npm start` prints it, the agents listed. */
async function openPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 1100 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.on('request', (request) => {
    if (!request.url().startsWith(gateway.url)) elsewhere.push(request.url());
  });
  await page.goto(`${gateway.url}/#key=${gateway.key}`);
  await page.locator(`#agent-select option[value="${AGENT}"]`).waitFor({ state: 'attached' });
  return page;
}

/** Picks the agent and sends the first message, which starts the session. */
async function startTurn(page: Page, text: string): Promise<string> {
  await page.selectOption('#agent-select', AGENT);
  await page.fill('#message', text);
  await page.click('#send');
  await page.locator('#session-bar').waitFor();
  return (await page.locator('#session-id').textContent()) ?? '';
}

/**
 * Lets the model's request, held before it sends anything, stream once the page follows
 * the session (it shows the step's start): a delta sent before reaches no viewer, as the
 * live stream keeps nothing. The reply then holds again after its first piece.
 */
async function streamOnceFollowed(page: Page): Promise<void> {
  await page.locator('[data-type="step/start"]').last().waitFor();
  await eventually('the model request to be held', () => (llm.release(MODEL) === 1 ? true : undefined), WAIT_MS, 20);
}

/** The seq of every log event the page shows, in the order shown. */
function shownSeqs(page: Page): Promise<number[]> {
  return page.locator('#transcript [data-seq]').evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-seq'))));
}

async function logSeqs(sessionId: string): Promise<number[]> {
  const response = await gateway.request(`/v1/sessions/${encodeURIComponent(sessionId)}/log?limit=500`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: { seq: number }[] }).events.map((e) => e.seq);
}

describe('the chat page', () => {
  it('is served with a Content-Security-Policy that runs only its own script, and without a key', async () => {
    const response = await fetch(`${gateway.url}/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await fetch(`${gateway.url}/chat/chat.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
  });

  it('streams the answer into the page piece by piece, then shows the message from the log, as text and never as HTML', async () => {
    const answer = 'Hello <b id="injected">world</b>, streamed to the page.';
    llm.script(MODEL, { kind: 'text', text: answer, chunkSize: 6, hold: true, holdMidStream: true });
    const page = await openPage();
    // The key is out of the address bar once the page has it.
    expect(page.url()).toBe(`${gateway.url}/`);
    await startTurn(page, 'say hello');
    await streamOnceFollowed(page);

    // The model has sent its first piece and holds the rest: the page shows that piece alone.
    const preview = page.locator('#transcript .live .bubble');
    await preview.filter({ hasText: 'Hello' }).waitFor();
    expect(await preview.textContent()).toBe('Hello ');
    expect(await page.locator('[data-type="assistant"]').count()).toBe(0);

    expect(llm.release(MODEL)).toBe(1);
    await page.locator('[data-type="turn/end"]').waitFor();
    expect(await page.locator('[data-type="assistant"] .bubble').textContent()).toBe(answer);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.locator('#transcript .live').count()).toBe(0);
    expect(elsewhere).toEqual([]);
  });

  it('shows each tool call with its lane and result, and runs a call that waits for approval once Approve is clicked', async () => {
    llm.script(
      MODEL,
      {
        kind: 'tool_calls',
        text: 'I will compute it and save it.',
        calls: [
          { id: 'toolu_chat_calc', name: 'calculator', input: { expression: '6 * 7' } },
          { id: 'toolu_chat_write', name: 'write_file', input: { path: 'answer.txt', content: '42' } },
        ],
      },
      { kind: 'text', text: 'Saved 42 to answer.txt.' },
    );
    const page = await openPage();
    await startTurn(page, 'compute 6 * 7 and save it');

    const approval = page.locator('.approval[data-call-id="toolu_chat_write"]');
    await approval.waitFor();
    expect(await approval.textContent()).toContain('write_file #toolu_chat_write waits for your decision');
    expect(existsSync(path.join(dir, 'answer.txt'))).toBe(false);
    await approval.locator('button.approve').click();

    await page.locator('[data-type="turn/end"]').waitFor();
    const calc = page.locator('.tool[data-call-id="toolu_chat_calc"]');
    const write = page.locator('.tool[data-call-id="toolu_chat_write"]');
    // The lanes come from the session's tools, which the page reads beside the stream: they may land after the cards.
    await calc.locator('.lane', { hasText: 'read-only · may run in parallel' }).waitFor();
    await write.locator('.lane', { hasText: 'side-effecting · alone, once' }).waitFor();
    expect(await calc.locator('[data-type="tool/result"]').textContent()).toBe('✓ 42');
    expect(await write.locator('[data-type="tool/result"]').textContent()).toMatch(/^✓ /);
    expect(await page.locator('.approval').count()).toBe(0);
    expect(await readFile(path.join(dir, 'answer.txt'), 'utf8')).toBe('42');
    expect(await page.locator('[data-type="assistant"] .bubble').last().textContent()).toBe('Saved 42 to answer.txt.');
    expect(await page.locator('#ui-link').getAttribute('href')).toMatch(/\/namespaces\/default\/workflows\/session-[^/]+\/history$/);
    expect(await page.locator('#spend').textContent()).toMatch(/^spent /);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('cancels the running turn when Cancel is clicked', async () => {
    llm.script(MODEL, { kind: 'text', text: 'This answer never finishes.', chunkSize: 5, hold: true, holdMidStream: true, holdTimeoutMs: 60_000 });
    const page = await openPage();
    await startTurn(page, 'start something long');
    await streamOnceFollowed(page);
    await page.locator('#transcript .live .bubble', { hasText: 'This' }).waitFor();

    await page.click('#cancel');
    const end = page.locator('[data-type="turn/end"]');
    await end.waitFor();
    expect(await end.textContent()).toMatch(/^turn 1 cancelled/);
    expect(await page.locator('#cancel').isDisabled()).toBe(true);
    expect(await page.locator('[data-type="assistant"]').count()).toBe(0);
  });

  it('reconnects after a reload mid-turn from the last event it showed, and ends with every log event exactly once', async () => {
    llm.script(MODEL, { kind: 'text', text: 'Reloading loses no event.', chunkSize: 5, hold: true, holdMidStream: true });
    const page = await openPage();
    const sessionId = await startTurn(page, 'survive a reload');
    await streamOnceFollowed(page);
    await page.locator('#transcript .live .bubble', { hasText: 'Reloa' }).waitFor();
    const before = await shownSeqs(page);
    expect(before.length).toBeGreaterThan(0);

    const reconnect = page.waitForRequest((request) => request.url().endsWith(`/v1/sessions/${encodeURIComponent(sessionId)}/events`));
    await page.reload();
    const headers = await (await reconnect).allHeaders();
    expect(headers['last-event-id']).toBe(String(Math.max(...before)));

    expect(llm.release(MODEL)).toBe(1);
    await page.locator('[data-type="turn/end"]').waitFor();
    expect(await page.locator('[data-type="assistant"] .bubble').textContent()).toBe('Reloading loses no event.');
    // Sorted: a tool result is shown inside its call's card, not after the events before it.
    expect((await shownSeqs(page)).sort((a, b) => a - b)).toEqual(await logSeqs(sessionId));
  });
});
