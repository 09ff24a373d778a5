/**
 * The package as another project gets it (docs/package.md): `npm pack`'s tarball of a
 * fresh build, installed into a new project with the registry's copies of its
 * dependencies, type-checked there by that project's own TypeScript under Node's module
 * rules, and run there by Node, nothing of this tree on its path. One build and one install
 * for the whole file: together they take a minute or more.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { blocksRunBy, DocLines } from './support/doc-blocks';
import { useTempDir } from './support/temp-dir';

const exec = promisify(execFile);

/**
 * The launcher runs TypeScript sources with tsx, a dev dependency, and the package holds no
 * sources: installed, it runs the compiled code (the `agent` test below runs it so).
 */
const SOURCES_ONLY: Record<string, readonly string[]> = { 'bin/launch.js': ['tsx/esm/api'] };

interface Manifest {
  name: string;
  version: string;
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const manifest = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as Manifest;
const doc = await readFile(path.join(PROJECT_ROOT, 'docs', 'package.md'), 'utf8');

/** The fenced blocks of a language in a Markdown text, in order. */
function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] ?? '');
}

/**
 * Every entry point imported, and a few names of each used the wrong way: a `@ts-expect-error`
 * line is itself an error when the name it marks has no type (an `any` from declarations
 * that did not resolve), so the check fails on untyped entries as well as on missing ones.
 */
const ENTRIES_TS = `
import { FAILURE_TYPES, SESSION_WORKFLOW, sendUpdate, type SessionState, type ToolDefinition, type TurnOutcome } from 'durable-agent-worker';
import { parseClientEnv, startSession, type SessionHandle } from 'durable-agent-worker/client';
import { agentSession } from 'durable-agent-worker/workflows';
import { AgentPlugin, createAgentWorker, parseWorkerEnv, type AgentPluginOptions, type AgentWorkerOptions } from 'durable-agent-worker/worker';
import { overloaded, runAgentTest, startFakeModel, text, toolCall, type AgentTestRun, type FakeModel } from 'durable-agent-worker/testing';

export const workflowName: string = SESSION_WORKFLOW;
export const send = sendUpdate;
export const meaning: string = FAILURE_TYPES.rate_limit.meaning;
export type Phase = SessionState['phase'];
export type Tool = ToolDefinition<{ city: string }>;
export type Handle = SessionHandle;
export type WorkerOptions = AgentWorkerOptions;
export const start = startSession;
export const create = createAgentWorker;
export const plugin = new AgentPlugin({ httpAllowlist: ['api.example.com'] } satisfies AgentPluginOptions);
// @ts-expect-error the allowlist is a list of hosts
export const unlisted = new AgentPlugin({ httpAllowlist: 'api.example.com' });
// @ts-expect-error a turn ends completed, failed or cancelled
export const paused: TurnOutcome['status'] = 'paused';
// @ts-expect-error the environment's values are strings
parseClientEnv({ AGENT_MAX_STEPS: 5 });
// @ts-expect-error the environment's values are strings
parseWorkerEnv({ AGENT_TASK_QUEUE: 1 });
// @ts-expect-error the session workflow takes a session's input
export const session = () => agentSession('hello');
export const script = (model: FakeModel) => model.reply(toolCall('lookup_order', { id: 7 }), overloaded({ retryAfterS: 2 }), text('Shipped.'));
export const runTurn = runAgentTest;
export const startModel = startFakeModel;
export type Answer = AgentTestRun['answer'];
// @ts-expect-error a Retry-After is a number of seconds
export const wrongWait = overloaded({ retryAfterS: '2' });
`;

/** The fake model of durable-agent-worker/testing, started from the installed package and asked once in Anthropic's wire format. */
const FAKE_MODEL_MJS = `
import { startFakeModel, text } from 'durable-agent-worker/testing';

const model = await startFakeModel();
model.reply(text('Hello from the fake model.'));
const env = model.providerEnv();
const response = await fetch(\`\${env.ANTHROPIC_BASE_URL}/v1/messages\`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': env.ANTHROPIC_API_KEY, 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
});
await response.text();
console.log(\`\${response.status} \${model.requests().map((r) => \`\${r.provider} \${r.replyKind}\`).join(', ')}, \${model.pending()} pending\`);
await model.close();
`;

/** A user's own workflows file: the agent's session beside a workflow of theirs, bundled as a worker would. */
const USER_WORKFLOWS_JS = `
export { agentSession } from 'durable-agent-worker/workflows';
export async function greet(name) {
  return \`hello \${name}\`;
}
`;

const BUNDLE_MJS = `
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
console.log(createRequire(import.meta.url).resolve('durable-agent-worker/workflows'));
const { code } = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)), logger: quiet });
console.log(\`bundled \${code.length} characters, agentSession \${code.includes('async function agentSession(')}\`);
`;

/** The plugin from the installed package: a bad option refused in one line, then a recorded history replayed with the plugin alone. */
const PLUGIN_MJS = `
import { readFile } from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { AgentPlugin } from 'durable-agent-worker/worker';

try {
  new AgentPlugin({ workspace: '' });
} catch (error) {
  console.log(error.message);
}
await Worker.runReplayHistory({ plugins: [new AgentPlugin()] }, JSON.parse(await readFile(process.argv[2], 'utf8')), 'normal-turn');
console.log('replayed with the plugin');
`;

describe('the npm package', () => {
  const tempDir = useTempDir('agent-package-');
  const project = () => path.join(tempDir(), 'project');
  let files: string[] = [];
  let tarballName = '';
  let documentedInstall: string[] = [];
  let untaken: readonly string[] = [];
  const typeChecks: Record<string, string> = {};

  beforeAll(async () => {
    const lines = new DocLines(await blocksRunBy('test/package.test.ts'));
    await run(lines.take(/^npm run build$/).argv, [], PROJECT_ROOT);
    // Into the test's folder: the page's `npm pack` would leave the tarball in the working tree.
    const packed = await run(lines.take(/^npm pack$/).argv, ['--json', '--pack-destination', tempDir()], PROJECT_ROOT);
    documentedInstall = lines.take(/npm install /).argv;
    untaken = lines.untaken();
    const [tarball] = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
    if (!tarball) throw new Error(`npm pack printed no tarball: ${packed}`);
    tarballName = tarball.filename;
    files = tarball.files.map((file) => file.path);
    await mkdir(project());
    await writeFile(path.join(project(), 'package.json'), JSON.stringify({ name: 'uses-the-agent', private: true, type: 'module' }));
    await writeFile(
      path.join(project(), 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'node16', moduleResolution: 'node16', strict: true, skipLibCheck: true, types: ['node'], outDir: 'out' },
        include: ['*.ts'],
      }),
    );
    await writeFile(path.join(project(), 'example.ts'), fencedBlocks(doc, 'ts')[0] ?? '');
    await writeFile(path.join(project(), 'entries.ts'), ENTRIES_TS);
    await writeFile(path.join(project(), 'fake-model.mjs'), FAKE_MODEL_MJS);
    await writeFile(path.join(project(), 'workflows.js'), USER_WORKFLOWS_JS);
    await writeFile(path.join(project(), 'bundle.mjs'), BUNDLE_MJS);
    await writeFile(path.join(project(), 'plugin.mjs'), PLUGIN_MJS);
    const versions = ['typescript', '@types/node'].map((name) => `${name}@${manifest.devDependencies[name]}`);
    await exec('npm', ['install', path.join(tempDir(), tarball.filename), ...versions, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: project() });
    // Emits out/ even when it finds errors, so the example still runs and says how it fails.
    typeChecks.node16 = await typeCheck([]);
    typeChecks.bundler = await typeCheck(['--module', 'esnext', '--moduleResolution', 'bundler', '--noEmit']);
  }, 600_000);

  /** A documented command's words, with the test's own options after them; what it printed. */
  async function run([command, ...args]: readonly string[], options: readonly string[], cwd: string): Promise<string> {
    if (command === undefined) throw new Error('an empty documented command');
    return (await exec(command, [...args, ...options], { cwd })).stdout;
  }

  /** What the project's own tsc says of it: nothing when it type-checks. */
  async function typeCheck(options: string[]): Promise<string> {
    const tsc = path.join(project(), 'node_modules', '.bin', 'tsc');
    const checked = await exec(tsc, ['-p', '.', ...options], { cwd: project() }).catch((error: { stdout: string }) => error);
    return checked.stdout;
  }

  it('is built, packed and installed by the commands of docs/package.md', () => {
    expect(tarballName).toBe(`${manifest.name}-${manifest.version}.tgz`);
    expect(documentedInstall).toEqual(['cd', '../my-project', '&&', 'npm', 'install', `../${manifest.name}/${tarballName}`]);
    expect(untaken).toEqual([]);
  });

  it('exports the entry points that docs/package.md lists, and its package.json', () => {
    const listed = [...doc.matchAll(/^\| `durable-agent-worker(\/[\w-]+)?` \|/gm)].map((row) => `.${row[1] ?? ''}`);
    expect(Object.keys(manifest.exports).sort()).toEqual([...listed, './package.json'].sort());
  });

  it('holds compiled JavaScript with its declarations, the files its exports name, and no tests, benchmarks, harness, scripts, fixtures or sources', () => {
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : [target.types, target.default]));
    for (const target of targets) expect(files).toContain(path.posix.normalize(target));
    expect(files.filter((file) => /^(test|bench|harness|scripts|node_modules)\//.test(file) || file.includes('fixtures'))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('ships no code that imports anything but Node, its own files and its runtime dependencies', async () => {
    const installed = path.join(project(), 'node_modules', manifest.name);
    const builtins = new Set(builtinModules);
    const outside = new Set<string>();
    for (const file of files.filter((f) => /\.(js|d\.ts)$/.test(f))) {
      const text = await readFile(path.join(installed, file), 'utf8');
      for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
        if (fileName.startsWith('.') || fileName.startsWith('node:') || builtins.has(fileName) || SOURCES_ONLY[file]?.includes(fileName)) continue;
        const name = fileName.split('/').slice(0, fileName.startsWith('@') ? 2 : 1).join('/');
        if (!(name in manifest.dependencies)) outside.add(`${file}: ${fileName}`);
      }
    }
    expect([...outside]).toEqual([]);
  });

  it('type-checks a project that imports every entry point, with moduleResolution node16 and bundler', () => {
    expect(typeChecks).toEqual({ node16: '', bundler: '' });
  });

  it('runs the example of docs/package.md and prints what the page says it prints', async () => {
    const { stdout } = await exec('node', [path.join('out', 'example.js')], { cwd: project() });
    expect(stdout).toBe(fencedBlocks(doc, 'text')[0]);
  });

  it('resolves durable-agent-worker/workflows to a file that a workflow bundle of the user’s own includes', async () => {
    const { stdout } = await exec('node', ['bundle.mjs'], { cwd: project() });
    const [resolved, bundled] = stdout.trim().split('\n');
    expect(resolved).toBe(path.join(project(), 'node_modules', manifest.name, 'dist', 'workflows', 'index.js'));
    expect(bundled).toMatch(/^bundled \d+ characters, agentSession true$/);
  }, 120_000);

  it('runs AgentPlugin from the installed package: it refuses a bad option in one line and replays a recorded session with nothing else given', async () => {
    const { stdout } = await exec('node', ['plugin.mjs', path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories', 'normal-turn.json')], { cwd: project() });
    expect(stdout).toContain('AgentPlugin: workspace: must be a folder path\n');
    expect(stdout).toContain('replayed with the plugin\n');
  }, 120_000);

  it('runs the fake model of durable-agent-worker/testing from the installed package', async () => {
    const { stdout } = await exec('node', ['fake-model.mjs'], { cwd: project() });
    expect(stdout).toBe('200 anthropic text, 0 pending\n');
  });

  it('brings the agent command, which runs from the compiled code', async () => {
    const { stdout } = await exec(path.join(project(), 'node_modules', '.bin', 'agent'), ['--help'], { cwd: project() });
    expect(stdout).toMatch(/^usage: /);
  });
});
