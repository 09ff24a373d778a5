/**
 * "Inspect history in the Temporal UI" is a promise of this project, so it is tested in a
 * real browser: Debian's chromium driven by playwright-core through `executablePath`.
 * Never a browser download: CI installs chromium with apt (see CONTRIBUTING.md, "Tests").
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { useAgentHarness } from './support/agent-harness';
import { runEntry } from './support/cli';

/** Debian's package puts it here; CHROMIUM_PATH points elsewhere (another distribution, a local build). */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SCREENSHOT = path.join(PROJECT_ROOT, 'test-results', 'ui-history.png');
/** The UI is a single-page app that fetches history after it loads; on a busy 2-core machine that takes seconds. */
const RENDER_TIMEOUT_MS = 60_000;

const h = useAgentHarness();
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
});

describe('the Temporal UI', () => {
  it('shows a finished demo session at the link the client prints, with each step activity under its summary and the retried attempt', async () => {
    expect(
      existsSync(CHROMIUM),
      `no chromium at ${CHROMIUM}: install Debian's package with "apt-get update && apt-get install -y chromium" (or set CHROMIUM_PATH); this test never downloads a browser`,
    ).toBe(true);
    const uiUrl = inject('temporalUiUrl');
    expect(uiUrl, 'the shared dev server runs no UI (TEMPORAL_TEST_ADDRESS points at a server of your own): run the tests without it').not.toBe('');

    // The demo of `npm start`: an overloaded reply, a calculator call, the answer.
    const model = 'ui-demo';
    h().llm.script(
      model,
      { kind: 'status', status: 529, headers: { 'retry-after': '1' } },
      { kind: 'tool_calls', text: 'Let me compute that.', calls: [{ name: 'calculator', input: { expression: '(17 + 25) * 2' } }] },
      { kind: 'text', text: '(17 + 25) × 2 = 84.' },
    );
    const run = await runEntry('client/main.ts', ['run', '--prompt', 'What is (17 + 25) * 2?', '--model', `anthropic:${model}`], {
      TEMPORAL_ADDRESS: h().env.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: h().env.TEMPORAL_NAMESPACE,
      AGENT_TASK_QUEUE: h().taskQueue,
      TEMPORAL_UI_URL: uiUrl,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('turn completed');
    const link = /^UI (http\S+)$/m.exec(run.stdout)?.[1];
    expect(link, run.stdout).toMatch(new RegExp(`^${uiUrl}/namespaces/default/workflows/session-[^/]+/[^/]+/history$`));

    // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(link ?? '');
    // Compact view: one row per activity, with its summary and the attempt that finished it.
    await page.getByText('Compact', { exact: true }).click({ timeout: RENDER_TIMEOUT_MS });

    const llmStep1 = page.getByText(`step 1 · llm anthropic:${model}`, { exact: true });
    const tool = page.getByText(/^step 1 · tool calculator #toolu_\w+$/);
    const llmStep2 = page.getByText(`step 2 · llm anthropic:${model}`, { exact: true });
    for (const summary of [llmStep1, tool, llmStep2]) await summary.first().waitFor({ timeout: RENDER_TIMEOUT_MS });

    const body = await page.locator('body').innerText();
    expect(body).toContain('COMPLETED');
    expect(body).toMatch(new RegExp(`step 1 · llm anthropic:${model}\\s+Attempt\\s+2`));
    expect(body).toMatch(/step 1 · tool calculator #toolu_\w+\s+Attempt\s+1/);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    // Room for two render waits of RENDER_TIMEOUT_MS after the demo ran, so they, not vitest's default, fail.
  }, 240_000);
});
