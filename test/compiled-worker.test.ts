/**
 * The compiled worker (`npm run build`, which `npm run worker` prefers and the Docker image
 * runs) finds the modules it hands to Temporal by path: the workflow code it bundles and,
 * with encryption on, the failure converter the bundle must include. Those paths are `.ts`
 * beside the sources and `.js` in `dist/`; a path that names the source file breaks every
 * compiled worker.
 *
 * The image itself cannot be built here (no Docker engine), so its runtime stage is rebuilt
 * from the Dockerfile's own lines in a temporary folder, away from the project's
 * node_modules: what the stage copies, the production install it runs, the command it
 * starts. A session turn through that worker and the CLI beside it then proves the image
 * needs nothing it leaves out (a dependency installed only for development, tsx, a source).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import { DIST_DIR, ensureBuilt } from '../scripts/build';
import { dockerStage, instructionsOf, readDockerfile, type Instruction, type Stage } from './support/dockerfile';
import { eventually } from './support/eventually';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

const run = promisify(execFile);
const compiled = async <T>(module: string): Promise<T> => (await import(pathToFileURL(path.join(DIST_DIR, module)).href)) as T;

describe('the compiled worker', () => {
  // The build starts through the launcher, whose own top-level await it must not wait on.
  it("is built by npm run build, the command of the Docker image's dev stage", async () => {
    const { stdout } = await run('npm', ['run', 'build'], { cwd: PROJECT_ROOT, timeout: 240_000 });
    expect(stdout).toMatch(/^build: dist\/ ready in /m);
  }, 300_000);

  it('bundles its workflows and the encrypting failure converter from files that exist in dist/', async () => {
    await ensureBuilt();
    const { WORKFLOWS_PATH } = await compiled<{ WORKFLOWS_PATH: string }>('worker/create-worker.js');
    const { FAILURE_CONVERTER_PATH } = await compiled<{ FAILURE_CONVERTER_PATH: string }>('encryption/data-converter.js');
    for (const file of [WORKFLOWS_PATH, FAILURE_CONVERTER_PATH]) {
      expect(file.startsWith(DIST_DIR + path.sep), file).toBe(true);
      expect(path.extname(file)).toBe('.js');
      expect(existsSync(file), file).toBe(true);
    }
  }, 300_000);
});

describe("the Docker image's runtime stage, rebuilt without Docker", () => {
  let image: RebuiltStage;
  let llm: ScriptedLlm;
  let worker: ChildProcess | undefined;
  let workerOutput = '';
  const taskQueue = uniqueTaskQueue('runtime-image');

  beforeAll(async () => {
    await ensureBuilt();
    image = await rebuildRuntimeStage(await mkdtemp(path.join(tmpdir(), 'runtime-image-')));
    llm = await startScriptedLlm();
  }, 300_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker?.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await llm?.close();
    if (image) await rm(image.dir, { recursive: true, force: true });
  });

  it('holds the package files, bin/, dist/ and production dependencies only: no tsx, TypeScript, vitest or Temporal test server', async () => {
    expect((await readdir(image.dir)).sort()).toEqual(['bin', 'dist', 'node_modules', 'package-lock.json', 'package.json']);
    for (const dev of ['tsx', 'typescript', 'vitest', 'esbuild', '@temporalio/testing']) expect(existsSync(path.join(image.dir, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(path.join(image.dir, 'node_modules', '@temporalio', 'worker')), '@temporalio/worker').toBe(true);
  });

  it("plays a session turn with a tool call through the image's command and its agent CLI", async () => {
    const model = 'runtime-image';
    llm.script(model, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '(17 + 25) * 2' } }] }, { kind: 'text', text: 'It is 84.' });
    // The image's environment, then what compose sets: the test's server, queue and scripted LLM.
    const env = outsideTheProject({ ...image.env, ...agentWorkerEnv({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue, llmUrl: llm.url }) });
    const [program, ...args] = image.command;
    expect(program).toBe('node');
    const started = spawn(process.execPath, args, { cwd: image.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    worker = started;
    started.stdout.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
    const exitedEarly = new Promise<never>((_, reject) => started.once('exit', (code) => reject(new Error(`the worker exited with ${code} before it polled:\n${workerOutput}`))));
    exitedEarly.catch(() => undefined);
    // A timeout's message ends with the worker's last lines, as the probe's error.
    const polling = () => {
      if (workerOutput.includes('worker: polling')) return true;
      throw new Error(workerOutput.trim().split('\n').slice(-5).join('\n'));
    };
    await Promise.race([exitedEarly, eventually('the worker from the rebuilt image to poll', polling, 120_000)]);

    const cli = await run(process.execPath, [path.join('bin', 'agent.js'), 'run', '--prompt', 'What is (17 + 25) * 2?', '--model', `anthropic:${model}`], {
      cwd: image.dir,
      env: outsideTheProject({ ...process.env, NO_COLOR: '1', TEMPORAL_ADDRESS: devServerAddress(), TEMPORAL_NAMESPACE: devServerNamespace(), AGENT_TASK_QUEUE: taskQueue }),
      timeout: 120_000,
    });
    expect(cli.stdout).toMatch(/✓ calculator: 84/);
    expect(cli.stdout).toContain('It is 84.');
    expect(cli.stdout).toContain('turn completed');
    expect(llm.requests({ model }).map((r) => r.replyKind)).toEqual(['tool_calls', 'text']);
  }, 240_000);
});

interface RebuiltStage {
  dir: string;
  /** The stage's CMD, exec form. */
  command: string[];
  /** The stage's ENV. */
  env: Record<string, string>;
}

/**
 * The Dockerfile's default stage, line by line, into `dir`: COPY from the build context
 * (the project) or from an earlier stage (the project after `ensureBuilt`, which stands
 * in for that stage's `npm run build`), RUN of npm commands in `dir` with this machine's
 * npm cache (the stage's cache mount), ENV and CMD recorded. USER and chown, which one user
 * cannot reproduce, are docker-compose.test.ts's to check.
 */
async function rebuildRuntimeStage(dir: string): Promise<RebuiltStage> {
  const stages = readDockerfile();
  const stage = dockerStage(stages);
  const env: Record<string, string> = {};
  let command: string[] | undefined;
  for (const instruction of stage.instructions) {
    switch (instruction.keyword) {
      case 'COPY':
        await copyInto(dir, stages, instruction);
        break;
      case 'RUN':
        await runInto(dir, instruction);
        break;
      case 'ENV':
        for (const pair of instruction.text.split(' ')) {
          const [name = '', value = ''] = pair.split(/=(.*)/s);
          env[name] = value;
        }
        break;
      case 'CMD':
        command = instruction.exec;
        break;
      case 'WORKDIR':
      case 'USER':
        break;
      default:
        throw new Error(`the rebuild of the runtime stage does not know ${instruction.keyword}`);
    }
  }
  if (!command) throw new Error(`the Dockerfile's stage ${stage.name} has no CMD in exec form`);
  return { dir, command, env };
}

async function copyInto(dir: string, stages: readonly Stage[], copy: Instruction): Promise<void> {
  const parts = copy.text.split(' ');
  const destination = parts.pop() ?? '';
  for (const source of parts) {
    const from = copy.flags.from === undefined ? source : pathInStage(dockerStage(stages, copy.flags.from), source);
    const target = destination.endsWith('/') ? path.join(dir, destination, path.basename(source)) : path.join(dir, destination);
    await cp(path.join(PROJECT_ROOT, from), target, { recursive: true });
  }
}

/** `/app/dist` in a stage whose WORKDIR is /app and that copied the context there: `dist` of the project. */
function pathInStage(stage: Stage, source: string): string {
  const workdir = instructionsOf(stage, 'WORKDIR').at(-1)?.text ?? '/';
  if (!source.startsWith(`${workdir}/`)) throw new Error(`COPY --from=${stage.name} ${source}: not under the stage's WORKDIR ${workdir}`);
  return source.slice(workdir.length + 1);
}

async function runInto(dir: string, instruction: Instruction): Promise<void> {
  if (instruction.text.startsWith('chown ')) return;
  const mount = instruction.flags.mount;
  if (mount !== undefined && mount !== 'type=cache,target=/root/.npm') throw new Error(`RUN --mount=${mount}: the rebuild knows npm's cache mount only`);
  if (!instruction.text.startsWith('npm ')) throw new Error(`RUN ${instruction.text}: the rebuild runs npm commands only`);
  await run('/bin/sh', ['-c', instruction.text], { cwd: dir, env: { ...process.env, npm_config_prefer_offline: 'true' }, timeout: 240_000 });
}

/** Without the variables that would let Node find the project's own modules (tsx among them). */
function outsideTheProject(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _options, NODE_PATH: _path, ...rest } = env;
  return rest;
}
