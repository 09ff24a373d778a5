/**
 * `npm run test:mutations [-- [--quick] NAME…]`: proves the tests bite (`--quick`, CI's cut,
 * leaves out the mutations marked slow). Each mutation in the
 * catalogue breaks one promise in a temporary copy of the tree, and the test files that
 * prove that promise must then fail. The unbroken copy runs those files first: a mutation
 * is killed when a test that passed unbroken fails broken, so a test that fails anyway
 * (someone's work in progress, a flaky machine) never counts as a kill. Prints a table;
 * any survivor, or a mutation that no longer applies, stops a test file from loading or
 * has no passing test to judge it, fails the check.
 *
 * One dev server serves every run (through TEMPORAL_TEST_ADDRESS, which the global setup
 * honours), so each mutation costs its test files and one workflow bundle, not a server.
 *
 * `--baseline REPORT` takes the unbroken results from the vitest JSON report of a run of
 * this very tree (CI's `npm test`, just before) instead of running the killer files again
 * in the copy; a report older than any source or test file is refused, and a killer file
 * the report lacks still runs in the copy.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { findFreePort, startDevServer } from '../dev-server';
import { PROJECT_ROOT, temporalCliPath, temporalTestServerPath } from '../temporal-binaries';
import { MUTATIONS, type Mutation } from './catalogue';
import { copyTree, type TreeCopy } from './tree-copy';

type Verdict = 'killed' | 'SURVIVED' | 'ERROR';
const LOGS = path.join(PROJECT_ROOT, 'test-results', 'mutations');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const baselineAt = args.indexOf('--baseline');
  const baselineReport = baselineAt < 0 ? undefined : args[baselineAt + 1];
  if (baselineAt >= 0 && (baselineReport === undefined || baselineReport.startsWith('--'))) throw new Error('--baseline needs the path of a vitest JSON report');
  const wanted = args.filter((a, i) => a !== '--quick' && i !== baselineAt && i !== baselineAt + 1);
  const unknown = wanted.filter((name) => !MUTATIONS.some((m) => m.name === name));
  if (unknown.length > 0) throw new Error(`unknown mutation(s): ${unknown.join(', ')}; known: ${MUTATIONS.map((m) => m.name).join(', ')}`);
  const named = wanted.length === 0 ? MUTATIONS : MUTATIONS.filter((m) => wanted.includes(m.name));
  const selected = quick ? named.filter((m) => !m.slow) : named;
  if (quick) console.log(`mutations: --quick leaves out ${named.length - selected.length} slow one(s): ${named.filter((m) => m.slow).map((m) => m.name).join(', ')}`);

  await rm(LOGS, { recursive: true, force: true });
  await mkdir(LOGS, { recursive: true });
  const [cli, testServer] = await Promise.all([temporalCliPath(), temporalTestServerPath()]);
  const server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, executable: cli, output: { file: path.join(LOGS, 'dev-server.log') } });
  const tree = await copyTree(PROJECT_ROOT);
  const env = { ...process.env, TEMPORAL_TEST_ADDRESS: server.address, TEMPORAL_TEST_SERVER_PATH: testServer, TEMPORAL_CLI_PATH: cli };
  try {
    const killerFiles = [...new Set(selected.flatMap((m) => m.killers))];
    const baseline = baselineReport === undefined ? await vitest(tree, env, 'baseline', killerFiles) : await reportedBaseline(tree, env, path.resolve(baselineReport), killerFiles);
    if (baseline.tests.size === 0) throw new Error(`the unbroken copy ran no test; see ${baseline.log}`);
    const rows: { mutation: Mutation; verdict: Verdict; detail: string }[] = [];
    for (const mutation of selected) {
      const started = Date.now();
      const row = await trial(tree, env, mutation, baseline);
      rows.push(row);
      console.log(`${row.verdict.padEnd(8)} ${mutation.name} (${((Date.now() - started) / 1000).toFixed(0)} s) ${row.detail}`);
    }
    printTable(rows);
    const bad = rows.filter((r) => r.verdict !== 'killed');
    if (bad.length > 0) {
      console.error(`mutations: ${bad.length} of ${rows.length} not killed: ${bad.map((r) => r.mutation.name).join(', ')}`);
      process.exitCode = 1;
    } else {
      console.log(`mutations: all ${rows.length} killed`);
    }
  } finally {
    await tree.remove();
    await server.stop();
  }
}

async function trial(tree: TreeCopy, env: NodeJS.ProcessEnv, mutation: Mutation, baseline: RunResult): Promise<{ mutation: Mutation; verdict: Verdict; detail: string }> {
  let undo: () => Promise<void>;
  try {
    undo = await tree.edit(mutation.file, mutation.find, mutation.replace);
  } catch (error) {
    return { mutation, verdict: 'ERROR', detail: (error as Error).message };
  }
  try {
    const result = await vitest(tree, env, mutation.name, mutation.killers, mutation.testNamePattern);
    // A break is meant to be valid code that does the wrong thing: one that stops a test
    // file from loading proves nothing about the tests in it.
    const unloaded = mutation.killers.filter((file) => result.unloaded.has(file));
    if (unloaded.length > 0) return { mutation, verdict: 'ERROR', detail: `${unloaded.join(', ')} no longer loads (is the break valid code?); see ${result.log}` };
    // The tests that passed unbroken and ran broken.
    const judged = [...baseline.tests].flatMap(([test, unbroken]): [string, TestStatus][] => {
      const file = test.slice(0, test.indexOf(' > '));
      if (unbroken !== 'passed' || !mutation.killers.includes(file)) return [];
      const broken = result.tests.get(test);
      return broken === undefined || broken === 'skipped' ? [] : [[test, broken]];
    });
    if (judged.length === 0) return { mutation, verdict: 'ERROR', detail: `no test that passes unbroken ran; see ${result.log}` };
    const killedBy = judged.filter(([, status]) => status === 'failed').map(([test]) => test);
    return killedBy.length > 0
      ? { mutation, verdict: 'killed', detail: `${killedBy.length} of ${judged.length} failed` }
      : { mutation, verdict: 'SURVIVED', detail: `all ${judged.length} passed; see ${result.log}` };
  } finally {
    await undo();
  }
}

/**
 * The unbroken results of `files` from a report of this tree's own test run; files it lacks
 * are run in the copy. A report older than the newest source or test file is of another
 * tree, and would count a test broken since as a kill: it is refused.
 */
async function reportedBaseline(tree: TreeCopy, env: NodeJS.ProcessEnv, report: string, files: readonly string[]): Promise<RunResult> {
  const written = await stat(report).then(
    (s) => s.mtimeMs,
    () => {
      throw new Error(`--baseline ${report}: no such report`);
    },
  );
  const newest = await newestSourceMtime();
  if (newest.mtimeMs > written) throw new Error(`--baseline ${report}: the report is older than ${newest.file}; run npm test first`);
  const reported = parseReport(JSON.parse(await readFile(report, 'utf8')) as VitestReport, PROJECT_ROOT);
  const covered = new Set([...reported.tests.keys()].map((test) => test.slice(0, test.indexOf(' > '))));
  const missing = files.filter((file) => !covered.has(file) && !reported.unloaded.has(file));
  const tests = new Map([...reported.tests].filter(([test]) => files.includes(test.slice(0, test.indexOf(' > ')))));
  if (missing.length === 0) return { tests, unloaded: reported.unloaded, log: report };
  console.log(`mutations: the baseline report lacks ${missing.join(', ')}; running them in the copy`);
  const ran = await vitest(tree, env, 'baseline', missing);
  return { tests: new Map([...tests, ...ran.tests]), unloaded: new Set([...reported.unloaded, ...ran.unloaded]), log: ran.log };
}

/** The most recently changed file of the folders whose code the tests run. */
async function newestSourceMtime(): Promise<{ file: string; mtimeMs: number }> {
  let newest = { file: '', mtimeMs: 0 };
  for (const dir of SOURCE_DIRS) {
    const entries = await readdir(path.join(PROJECT_ROOT, dir), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const { mtimeMs } = await stat(file);
      if (mtimeMs > newest.mtimeMs) newest = { file: path.relative(PROJECT_ROOT, file), mtimeMs };
    }
  }
  return newest;
}

const SOURCE_DIRS = ['activities', 'bench', 'client', 'config', 'connection', 'contracts', 'encryption', 'scripts', 'test', 'worker', 'workflows'];

type TestStatus = 'passed' | 'failed' | 'skipped';

interface RunResult {
  /** Each test by `file > full name`. */
  tests: Map<string, TestStatus>;
  /** Files that failed to load, so none of their tests ran. */
  unloaded: Set<string>;
  log: string;
}

interface VitestReport {
  testResults?: { name: string; status: string; assertionResults?: { fullName: string; status: string }[] }[];
}

/** vitest in the copy, on the given files; its JSON report (from the project's config) is the verdict. */
async function vitest(tree: TreeCopy, env: NodeJS.ProcessEnv, name: string, files: readonly string[], pattern?: string): Promise<RunResult> {
  const log = path.join(LOGS, `${name}.log`);
  const report = path.join(tree.root, 'test-results', 'vitest.json');
  await rm(report, { force: true });
  const args = ['vitest', 'run', ...files, ...(pattern ? ['-t', pattern] : [])];
  const out = await open(log, 'w');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('npx', args, { cwd: tree.root, env, stdio: ['ignore', out.fd, out.fd] });
      child.once('error', reject);
      child.once('exit', () => resolve());
    });
  } finally {
    await out.close();
  }
  const parsed = await readFile(report, 'utf8').then(
    (text) => JSON.parse(text) as VitestReport,
    () => undefined,
  );
  return { ...parseReport(parsed, tree.root), log };
}

/** Each test of a vitest JSON report by `file > full name`, files relative to `root`. */
function parseReport(report: VitestReport | undefined, root: string): Omit<RunResult, 'log'> {
  const tests = new Map<string, TestStatus>();
  const unloaded = new Set<string>();
  for (const file of report?.testResults ?? []) {
    const relative = path.relative(root, file.name);
    const assertions = file.assertionResults ?? [];
    for (const a of assertions) tests.set(`${relative} > ${a.fullName}`, a.status === 'passed' ? 'passed' : a.status === 'failed' ? 'failed' : 'skipped');
    if (assertions.length === 0 && file.status === 'failed') unloaded.add(relative);
  }
  return { tests, unloaded };
}

function printTable(rows: { mutation: Mutation; verdict: Verdict }[]): void {
  const width = Math.max(...rows.map((r) => r.mutation.name.length));
  console.log(`\n| ${'mutation'.padEnd(width)} | verdict  | killed by |`);
  console.log(`| ${'-'.repeat(width)} | -------- | --------- |`);
  for (const { mutation, verdict } of rows) console.log(`| ${mutation.name.padEnd(width)} | ${verdict.padEnd(8)} | ${mutation.killers.join(', ')} |`);
}

main().catch((error: unknown) => {
  console.error(`mutations: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
