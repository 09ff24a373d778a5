/**
 * `npm run test:mutations [-- [--quick] [--baseline-report FILE] NAME…]`: proves the tests
 * bite (`--quick`, CI's cut, leaves out the mutations marked slow). Each mutation in the
 * catalogue breaks one promise in a temporary copy of the tree, and the test files that
 * prove that promise must then fail. The unbroken copy runs those files first: a mutation
 * is killed when a test that passed unbroken fails broken, so a test that fails anyway
 * (someone's work in progress, a flaky machine) never counts as a kill. Prints a table;
 * any survivor, or a mutation that no longer applies, stops a test file from loading or
 * has no passing test to judge it, fails the check.
 *
 * `--baseline-report FILE` takes the unbroken verdicts from a vitest JSON report of this same
 * tree instead (CI passes the one `npm test` wrote a moment before, against a server set up
 * as this one is): the files it holds are not run again unbroken, which is minutes of CI.
 * Only files the report lacks get a baseline run of their own.
 *
 * One dev server serves every run (through TEMPORAL_TEST_ADDRESS, which the global setup
 * honours), so each mutation costs its test files and one workflow bundle, not a server.
 * Mutations are tried two at a time (`MUTATION_LANES`), each lane on a copy of its own: a
 * trial is mostly one core's work, and the machines this runs on have two. Each lane keeps one
 * vitest running for all its trials (vitest-lane.ts), so a trial costs its test files, not a
 * vitest start; a break of a file that vitest's own process loaded (its config, the global
 * setup and what they import) gets a fresh vitest instead, as every trial once did.
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { findFreePort, startDevServer } from '../../harness/dev-server';
import { PROJECT_ROOT, temporalCliPath, temporalTestServerPath } from '../../harness/temporal-binaries';
import { MUTATIONS, type Mutation } from './catalogue';
import { copyTree, type TreeCopy } from './tree-copy';
import { startVitestLane, type VitestLane } from './vitest-lane-client';

type Verdict = 'killed' | 'SURVIVED' | 'ERROR';
const LOGS = path.join(PROJECT_ROOT, 'test-results', 'mutations');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const reportAt = args.indexOf('--baseline-report');
  const baselineReport = reportAt === -1 ? undefined : args[reportAt + 1];
  if (reportAt !== -1 && (baselineReport === undefined || baselineReport.startsWith('--'))) throw new Error('--baseline-report needs the path of a vitest JSON report');
  const wanted = args.filter((a, i) => a !== '--quick' && (reportAt === -1 || (i !== reportAt && i !== reportAt + 1)));
  const unknown = wanted.filter((name) => !MUTATIONS.some((m) => m.name === name));
  if (unknown.length > 0) throw new Error(`unknown mutation(s): ${unknown.join(', ')}; known: ${MUTATIONS.map((m) => m.name).join(', ')}`);
  const named = wanted.length === 0 ? MUTATIONS : MUTATIONS.filter((m) => wanted.includes(m.name));
  const selected = quick ? named.filter((m) => !m.slow) : named;
  if (quick) console.log(`mutations: --quick leaves out ${named.length - selected.length} slow one(s): ${named.filter((m) => m.slow).map((m) => m.name).join(', ')}`);

  await rm(LOGS, { recursive: true, force: true });
  await mkdir(LOGS, { recursive: true });
  const [cli, testServer] = await Promise.all([temporalCliPath(), temporalTestServerPath()]);
  const server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, executable: cli, output: { file: path.join(LOGS, 'dev-server.log') } });
  const lanes = Math.max(1, Math.min(Number.parseInt(process.env.MUTATION_LANES ?? '2', 10) || 1, selected.length));
  const trees = await Promise.all(Array.from({ length: lanes }, () => copyTree(PROJECT_ROOT)));
  const [tree] = trees;
  if (!tree) throw new Error('no copy of the tree');
  const env = { ...process.env, TEMPORAL_TEST_ADDRESS: server.address, TEMPORAL_TEST_SERVER_PATH: testServer, TEMPORAL_CLI_PATH: cli };
  try {
    const baseline = await unbrokenVerdicts(tree, env, [...new Set(selected.flatMap((m) => m.killers))], baselineReport);
    if (baseline.tests.size === 0) throw new Error(`the unbroken copy ran no test; see ${baseline.log}`);
    const verdicts = new Map<Mutation, { mutation: Mutation; verdict: Verdict; detail: string }>();
    const queue = [...selected];
    await Promise.all(
      trees.map(async (copy, i) => {
        const start = () => startVitestLane(copy.root, env, path.join(LOGS, `lane-${i + 1}.log`));
        const lane: Lane = { tree: copy, vitest: await start(), start, changed: new Set() };
        try {
          for (let mutation = queue.shift(); mutation; mutation = queue.shift()) {
            const started = Date.now();
            const row = await trial(lane, env, mutation, baseline);
            verdicts.set(mutation, row);
            console.log(`${row.verdict.padEnd(8)} ${mutation.name} (${((Date.now() - started) / 1000).toFixed(0)} s) ${row.detail}`);
          }
        } finally {
          await lane.vitest.close();
        }
      }),
    );
    // The table in the catalogue's order, whichever lane finished first.
    const rows = selected.flatMap((mutation) => verdicts.get(mutation) ?? []);
    printTable(rows);
    const bad = rows.filter((r) => r.verdict !== 'killed');
    if (bad.length > 0) {
      console.error(`mutations: ${bad.length} of ${rows.length} not killed: ${bad.map((r) => r.mutation.name).join(', ')}`);
      process.exitCode = 1;
    } else {
      console.log(`mutations: all ${rows.length} killed`);
    }
  } finally {
    await Promise.all(trees.map((copy) => copy.remove()));
    await server.stop();
  }
}

/** A lane: its copy of the tree, its running vitest (and how to start another), and the files edited since that vitest's last run. */
interface Lane {
  tree: TreeCopy;
  vitest: VitestLane;
  start: () => Promise<VitestLane>;
  changed: Set<string>;
}

async function trial(lane: Lane, env: NodeJS.ProcessEnv, mutation: Mutation, baseline: RunResult): Promise<{ mutation: Mutation; verdict: Verdict; detail: string }> {
  const { tree } = lane;
  const edited = path.join(tree.root, mutation.file);
  let undo: () => Promise<void>;
  try {
    undo = await tree.edit(mutation.file, mutation.find, mutation.replace);
  } catch (error) {
    return { mutation, verdict: 'ERROR', detail: (error as Error).message };
  }
  lane.changed.add(edited);
  // The lane's vitest still holds what its own process loaded; a break there needs a vitest that loads it broken.
  const runner = lane.vitest.loaded().has(edited) ? undefined : lane;
  // The tests that passed unbroken and ran broken, and those of them that failed.
  const judge = (run: RunResult) => {
    const judged = [...baseline.tests].flatMap(([test, unbroken]): [string, TestStatus][] => {
      const file = test.slice(0, test.indexOf(' > '));
      if (unbroken !== 'passed' || !mutation.killers.includes(file)) return [];
      const broken = run.tests.get(test);
      return broken === undefined || broken === 'skipped' ? [] : [[test, broken]];
    });
    return { judged, killedBy: judged.filter(([, status]) => status === 'failed').map(([test]) => test) };
  };
  try {
    // The first failure settles a kill, so the trial stops there (`--bail`) instead of
    // running the rest of its files. A failure that is not a kill (a test that fails
    // unbroken too) can stop it before the killing test ran: such a trial runs again whole.
    const bailed = await vitest(tree, env, mutation.name, mutation.killers, mutation.testNamePattern, true, runner);
    const result = judge(bailed).killedBy.length > 0 || !bailed.bailed ? bailed : await vitest(tree, env, mutation.name, mutation.killers, mutation.testNamePattern, false, runner);
    // A break is meant to be valid code that does the wrong thing: one that stops a test
    // file from loading proves nothing about the tests in it.
    const unloaded = mutation.killers.filter((file) => result.unloaded.has(file));
    if (unloaded.length > 0) return { mutation, verdict: 'ERROR', detail: `${unloaded.join(', ')} no longer loads (is the break valid code?); see ${result.log}` };
    const { judged, killedBy } = judge(result);
    if (judged.length === 0) return { mutation, verdict: 'ERROR', detail: `no test that passes unbroken ran; see ${result.log}` };
    return killedBy.length > 0
      ? { mutation, verdict: 'killed', detail: `${killedBy.length} of ${judged.length} failed` }
      : { mutation, verdict: 'SURVIVED', detail: `all ${judged.length} passed; see ${result.log}` };
  } finally {
    await undo();
    lane.changed.add(edited);
  }
}

/**
 * How the killer files fare unbroken: from the given report for the files it holds (a file
 * that failed to load there counts as absent), from a run in the copy for the others.
 */
async function unbrokenVerdicts(tree: TreeCopy, env: NodeJS.ProcessEnv, files: string[], reportFile: string | undefined): Promise<RunResult> {
  if (reportFile === undefined) return vitest(tree, env, 'baseline', files);
  const reported = await readReport(path.resolve(reportFile), PROJECT_ROOT);
  if (reported === undefined) throw new Error(`--baseline-report ${reportFile} is not a vitest JSON report`);
  const covered = new Set([...reported.tests.keys()].map((test) => test.slice(0, test.indexOf(' > '))));
  const missing = files.filter((file) => !covered.has(file));
  console.log(`mutations: unbroken verdicts of ${files.length - missing.length} file(s) from ${reportFile}${missing.length > 0 ? `; running the other ${missing.length}` : ''}`);
  if (missing.length === 0) return { tests: reported.tests, unloaded: new Set(), log: reportFile };
  const run = await vitest(tree, env, 'baseline', missing);
  return { tests: new Map([...reported.tests, ...run.tests]), unloaded: run.unloaded, log: run.log };
}

type TestStatus = 'passed' | 'failed' | 'skipped';

interface RunResult {
  /** Each test by `file > full name`. */
  tests: Map<string, TestStatus>;
  /** Files that failed to load, so none of their tests ran. */
  unloaded: Set<string>;
  log: string;
  /** A `--bail` run that had a failure, so some of its tests may not have run. */
  bailed?: boolean;
}

interface VitestReport {
  testResults?: { name: string; status: string; assertionResults?: { fullName: string; status: string }[] }[];
}

/**
 * vitest in the copy, on the given files, by the lane's running vitest when given one, else in
 * a process of its own; its JSON report (from the project's config) is the verdict.
 */
async function vitest(tree: TreeCopy, env: NodeJS.ProcessEnv, name: string, files: readonly string[], pattern?: string, bail = false, lane?: Lane): Promise<RunResult> {
  const log = path.join(LOGS, `${name}.log`);
  const report = path.join(tree.root, 'test-results', 'vitest.json');
  await rm(report, { force: true });
  if (lane) {
    try {
      await lane.vitest.run({ files: [...files], ...(pattern ? { pattern } : {}), bail, log, changed: [...lane.changed] });
    } catch (error) {
      // As a `vitest run` that crashed: no report, so the trial is an ERROR naming this log; the
      // lane goes on with a vitest of its own, which loads everything from the copy afresh.
      await appendFile(log, `\nmutations: ${(error as Error).message}\n`);
      await lane.vitest.close();
      lane.vitest = await lane.start();
    }
    lane.changed.clear();
  } else {
    await spawnVitest(tree, env, files, log, pattern, bail);
  }
  const parsed = await readReport(report, tree.root);
  const tests: Map<string, TestStatus> = parsed?.tests ?? new Map();
  return { tests, unloaded: parsed?.unloaded ?? new Set(), log, bailed: bail && [...tests.values()].includes('failed') };
}

/** `vitest run` in a process of its own, its output in `log`. */
async function spawnVitest(tree: TreeCopy, env: NodeJS.ProcessEnv, files: readonly string[], log: string, pattern: string | undefined, bail: boolean): Promise<void> {
  // vitest's own entry under node rather than through npx, which costs half a second of a
  // core per trial to find it (a minute of CI over a hundred trials).
  const args = [path.join(tree.root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files, ...(pattern ? ['-t', pattern] : []), ...(bail ? ['--bail', '1'] : [])];
  const out = await open(log, 'w');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd: tree.root, env, stdio: ['ignore', out.fd, out.fd] });
      child.once('error', reject);
      child.once('exit', () => resolve());
    });
  } finally {
    await out.close();
  }
}

/** A vitest JSON report's tests, by `file > full name` with the file relative to `root`; undefined when there is no readable report. */
async function readReport(report: string, root: string): Promise<Omit<RunResult, 'log'> | undefined> {
  const parsed = await readFile(report, 'utf8').then(
    (text) => JSON.parse(text) as VitestReport,
    () => undefined,
  );
  if (parsed === undefined) return undefined;
  const tests = new Map<string, TestStatus>();
  const unloaded = new Set<string>();
  for (const file of parsed.testResults ?? []) {
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
