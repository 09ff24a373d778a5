/**
 * The docs are tests: every shell block of the README and docs/ that a person is told to
 * run is run here, as written, against `npm start`'s embedded servers (its scripted LLM,
 * which answers any model as the offline demo model, and its worker), and each command
 * must exit 0 and print the lines the text promises. A block that cannot run on this
 * machine says so in the text, and the variables it sets must be ones the code reads.
 * See test/support/doc-blocks.ts for the marks.
 */
import { exec, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocLines, docFiles, parseDocBlocks, promisePattern, readDocBlocks, shellWords, variablesSet, withoutComment, type DocBlock } from './support/doc-blocks';
import { devServerAddress, devServerNamespace } from './temporal-env';

const ROOT = path.join(import.meta.dirname, '..');
const run = promisify(exec);

async function allBlocks(): Promise<DocBlock[]> {
  return (await Promise.all((await docFiles()).map(readDocBlocks))).flat();
}

describe('reading the docs’ shell blocks', () => {
  it('takes the mark above a block, the commands without their comments, and the promised output after each', () => {
    const text = [
      '*Not run here: needs a Temporal Cloud account.*',
      '',
      '```sh',
      'export TEMPORAL_API_KEY=<key>   # from the Cloud UI',
      '```',
      '',
      '```sh',
      'npm run client -- send <id> "a # not a comment" --wait   # a comment',
      '#   … 144…',
      '# a plain comment',
      '```',
    ].join('\n');
    const [cloud, local] = parseDocBlocks('x.md', text);
    expect(cloud?.mark).toEqual({ kind: 'not-run', why: 'needs a Temporal Cloud account.' });
    expect(cloud && variablesSet(cloud)).toEqual(['TEMPORAL_API_KEY']);
    expect(local?.mark).toEqual({ kind: 'run' });
    expect(local?.commands).toEqual([{ line: 'npm run client -- send <id> "a # not a comment" --wait', promises: ['… 144…'] }]);
    expect(promisePattern('… 144…').test('assistant: 12 × 12 = 144.')).toBe(true);
    expect(promisePattern('… 144…').test('assistant: 143')).toBe(false);
    expect(withoutComment("echo 'a # b' # c")).toBe("echo 'a # b'");
  });

  it('hands a block marked “Run by” to its test command by command, as sh splits them, and keeps what the test left out', () => {
    const [block] = parseDocBlocks('x.md', ['*Run by test/x.test.ts.*', '```sh', 'A=1 B=x=y npm run worker', "temporal workflow list --query 'Id = \"a b\"'", '```'].join('\n'));
    expect(block?.mark).toEqual({ kind: 'run-by', test: 'test/x.test.ts' });
    const lines = new DocLines(block ? [block] : []);
    expect(lines.take(/^temporal /)).toEqual({ env: {}, argv: ['temporal', 'workflow', 'list', '--query', 'Id = "a b"'] });
    expect(() => lines.take(/^temporal /)).toThrow(/no documented command matches/);
    expect(lines.untaken()).toEqual(['A=1 B=x=y npm run worker']);
    expect(shellWords('A=1 B=x=y npm run worker')).toEqual({ env: { A: '1', B: 'x=y' }, argv: ['npm', 'run', 'worker'] });
  });
});

describe('the shell blocks of the README and docs/', () => {
  it('are each run here, run by a named test, or marked as not run here with the reason', async () => {
    const blocks = await allBlocks();
    expect(blocks.filter((b) => b.mark.kind === 'run').length).toBeGreaterThan(0);
    for (const block of blocks) {
      const where = `${block.file}:${block.line}`;
      expect(block.commands.length, `${where} has no command`).toBeGreaterThan(0);
      if (block.mark.kind === 'run-by') {
        // The named test reads the block's commands from the text and runs them (DocLines), so they cannot drift apart.
        const test = path.join(ROOT, block.mark.test);
        expect(existsSync(test), `${where}: ${block.mark.test}`).toBe(true);
        expect(await readFile(test, 'utf8'), `${where}: ${block.mark.test} does not run the block's commands`).toContain(`blocksRunBy('${block.mark.test}')`);
      }
      if (block.mark.kind === 'not-run') expect(block.mark.why.length, where).toBeGreaterThan(10);
    }
  });

  it('set only variables that the configuration reference documents and the code reads', async () => {
    const reference = await readFile(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const product = await productSources();
    for (const block of await allBlocks()) {
      for (const name of variablesSet(block)) {
        expect(reference, `${block.file}:${block.line} sets ${name}, which docs/configuration.md does not document`).toContain(`\`${name}\``);
        // The OpenTelemetry SDK reads the OTEL_* variables itself.
        if (!name.startsWith('OTEL_')) expect(product.includes(name), `${block.file}:${block.line} sets ${name}, which no product code reads`).toBe(true);
      }
    }
  });
});

describe('the runnable shell blocks, against npm start', () => {
  let npmStart: ChildProcess | undefined;
  let workspace: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    workspace = await mkdtemp(path.join(tmpdir(), 'docs-commands-'));
    env = {
      TEMPORAL_ADDRESS: devServerAddress(),
      TEMPORAL_NAMESPACE: devServerNamespace(),
      AGENT_TASK_QUEUE: `docs-commands-${process.pid}`,
      AGENT_WORKSPACE: workspace,
      ANTHROPIC_API_KEY: '',
      OPENAI_API_KEY: '',
      GEMINI_API_KEY: '',
      NO_COLOR: '1',
    };
    // `npm start` as a person leaves it running, on the test run's server (it uses one that answers).
    npmStart = spawn(process.execPath, ['bin/launch.js', 'scripts/start.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const child = npmStart;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const collect = (chunk: Buffer) => {
        out += chunk.toString();
        if (/Temporal UI http/.test(out)) resolve();
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before its demo finished:\n${out}`)));
    });
  }, 180_000);

  afterAll(async () => {
    npmStart?.kill('SIGINT');
    await rm(workspace, { recursive: true, force: true });
  });

  it('exit 0 and print what the text promises, command by command, in a second terminal', async () => {
    const blocks = (await allBlocks()).filter((b) => b.mark.kind === 'run');
    const sessionIds = new Map<string, string>();
    for (const block of blocks) {
      for (const command of block.commands) {
        const where = `${block.file}:${block.line}: ${command.line}`;
        const id = sessionIds.get(block.file);
        if (command.line.includes('<id>')) expect(id, `${where}: no session id printed before it`).toBeDefined();
        const line = command.line.replaceAll('<id>', id ?? '');
        const { stdout, stderr } = await run(line, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000, shell: '/bin/bash' }).catch((error: unknown) => {
          const failed = error as { code?: number; stdout?: string; stderr?: string };
          throw new Error(`${where} exited ${failed.code}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
        });
        const printed = `${stdout}\n${stderr}`;
        for (const promise of command.promises) expect(printed, `${where} promises "${promise}"`).toMatch(promisePattern(promise));
        const started = /session (session-[0-9a-f-]{36})/.exec(stdout)?.[1];
        if (started) sessionIds.set(block.file, started);
      }
    }
  }, 600_000);
});

/** The text of every product source file, where a variable the docs set must be read. */
async function productSources(): Promise<string> {
  const folders = ['activities', 'client', 'config', 'connection', 'encryption', 'tracing', 'worker', 'harness', 'scripts', 'contracts'].filter((folder) => existsSync(path.join(ROOT, folder)));
  const files = (await Promise.all(folders.map(async (folder) => (await readdir(path.join(ROOT, folder), { recursive: true })).map((f) => path.join(folder, f))))).flat();
  return (await Promise.all(files.filter((f) => f.endsWith('.ts')).map((f) => readFile(path.join(ROOT, f), 'utf8')))).join('\n');
}
