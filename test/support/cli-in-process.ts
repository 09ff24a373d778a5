import { vi } from 'vitest';
import { DEFAULT_SERVER, failureLine, runCommandLine } from '../../client/command-line';
import type { CliResult } from './cli';

/**
 * A command line of `npm run client` run in the test's own process, through the same
 * `runCommandLine` and error line as client/main.ts, its stdout and stderr captured. A
 * refusal checked this way costs milliseconds, where `runEntry` starts a process that
 * loads the client (a second of a core, 47 of them in one file). Each file that uses it
 * keeps a few cases through `runEntry`, so the process around it (exit code, stderr, no
 * stack trace) stays proven. A command that follows a session live (watch, send --wait)
 * runs to its end, with no Ctrl-C to stop it; the encryption key and the default MCP
 * servers come from this process's environment, not from `env`. One at a time: the
 * capture is of this process's console.
 */
export async function runInProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const line = (parts: unknown[]) => `${parts.map(String).join(' ')}\n`;
  const spies = [
    vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void (stdout += line(parts))),
    vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void (stderr += line(parts))),
    vi.spyOn(console, 'warn').mockImplementation((...parts: unknown[]) => void (stderr += line(parts))),
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout += chunk.toString();
      return true;
    }),
  ];
  let server = DEFAULT_SERVER;
  try {
    const code = await runCommandLine(args, {
      env: { ...process.env, NO_COLOR: '1', ...env },
      signal: new AbortController().signal,
      onServer: (to) => {
        server = to;
      },
    });
    return { code, stdout, stderr };
  } catch (error) {
    const failure = await failureLine(error, server);
    return { code: failure.exitCode, stdout, stderr: `${stderr}${failure.line}\n` };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}
