import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../harness/dev-server';
import { runEntry } from './support/cli';
import { blocksRunBy, DocLines, shellWords } from './support/doc-blocks';
import { startOtlpEndpoint } from './support/otlp-endpoint';

const ROOT = path.join(import.meta.dirname, '..');

/** What `npm run NAME` runs, from package.json: the test starts that in its place. */
async function npmScript(name: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[name];
  if (script === undefined) throw new Error(`package.json has no script ${name}`);
  return shellWords(script).argv;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'npm-start-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Ports of their own, so the smoke test never touches a developer's server on 7233/8233 or gateway on 8787. */
async function startEnv(name: string) {
  const [port, uiPort, gatewayPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  return {
    TEMPORAL_ADDRESS: `localhost:${port}`,
    TEMPORAL_UI_URL: `http://localhost:${uiPort}`,
    AGENT_GATEWAY_PORT: String(gatewayPort),
    TEMPORAL_DEV_DB: path.join(dir, `${name}.sqlite`),
    AGENT_TASK_QUEUE: `start-${name}`,
    ANTHROPIC_API_KEY: '',
    OPENAI_API_KEY: '',
    GEMINI_API_KEY: '',
  };
}

/**
 * `npm start --once` on ports of its own. A port free when the test picked it can be taken
 * by another test's connection before the dev server binds it: then once more, on new ports.
 */
async function startOnce(name: string, extra: Record<string, string> = {}) {
  for (let attempt = 1; ; attempt++) {
    const env = { ...(await startEnv(`${name}-${attempt}`)), ...extra };
    const result = await runEntry('scripts/start.ts', ['--once'], env, 180_000);
    if (attempt === 2 || result.code === 0 || !result.stderr.includes('address already in use')) return { env, result };
  }
}

describe('npm start', () => {
  it('is the README’s first command, and .ci/run runs its `npm ci` and the second, `npm test`', async () => {
    const lines = new DocLines(await blocksRunBy('test/start.test.ts'));
    expect(lines.take(/npm start$/).argv).toEqual(['npm', 'ci', '&&', 'npm', 'start']);
    expect(lines.take(/^npm test$/).argv).toEqual(['npm', 'test']);
    expect(lines.untaken()).toEqual([]);
    expect(await npmScript('start')).toEqual(['node', 'bin/launch.js', 'scripts/start.ts']);
    const ci = await readFile(path.join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/\bnpm test$/m);
  });

  it('with --once: starts the dev server, the scripted LLM and a worker, runs the demo with a retry and a tool call, and exits 0', async () => {
    const { env, result } = await startOnce('once');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/retrying in \d+ s \(attempt 2\/11\): overloaded/);
    expect(result.stdout).toMatch(/✓ calculator: 84/);
    expect(result.stdout).toContain('turn completed');
    expect(result.stdout).toContain(`Temporal UI ${env.TEMPORAL_UI_URL}/namespaces/default/workflows/session-`);
    expect(result.stdout).toMatch(new RegExp(`chat page http://127\\.0\\.0\\.1:${env.AGENT_GATEWAY_PORT}/#key=dagw_[\\w-]+&session=session-`));
    // Above the 180 s the run itself may take, so that limit, not vitest's default, is what fails.
  }, 240_000);

  it('with an OTLP endpoint set: exports the client’s spans before it exits', async () => {
    const endpoint = await startOtlpEndpoint();
    try {
      // A batch schedule far beyond the run, so only the flush on the way out can export the spans.
      const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '600000' };
      const { result } = await startOnce('traced', tracing);
      expect(result.code, result.stderr).toBe(0);
      expect(endpoint.spans.filter((s) => s.service === 'durable-agent-client').map((s) => s.name)).toContain('UpdateWithStartWorkflow:send');
    } finally {
      await endpoint.close();
    }
  }, 240_000);

  it('keeps the UI up after the demo: the printed link answers, and Ctrl-C stops everything', async () => {
    const env = await startEnv('ui');
    // `npm start` as package.json has it, with this Node.
    const [, ...args] = await npmScript('start');
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const link = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no UI link in time:\n${out}`)), 150_000);
        child.stdout.on('data', () => {
          const match = /Temporal UI (http\S+)/.exec(out);
          // The chat page's line comes right after it.
          if (match?.[1] && /chat page http\S+\n/.test(out)) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        void exited.then(() => reject(new Error(`npm start exited early:\n${out}`)));
      });
      const page = await fetch(link);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
      // The chat page, and the demo's key in its fragment: the gateway takes it and knows the demo session.
      const chat = new URL(/chat page (http\S+)/.exec(out)?.[1] ?? '');
      const fragment = new URLSearchParams(chat.hash.slice(1));
      expect(await (await fetch(chat.origin)).text()).toContain('<script type="module" src="/chat/chat.js"></script>');
      const state = await fetch(`${chat.origin}/v1/sessions/${fragment.get('session')}`, { headers: { authorization: `Bearer ${fragment.get('key')}` } });
      expect(state.status).toBe(200);
      expect(await state.json()).toMatchObject({ sessionId: fragment.get('session'), turn: 1 });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    // Above the 150 s wait for the link.
  }, 240_000);
});
