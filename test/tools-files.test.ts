import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openInWorkspace } from '../activities/tools/open-in-workspace';
import { runReadFile } from '../activities/tools/read-file';
import { resolveWorkspacePath } from '../activities/tools/workspace-path';
import { runWriteFile } from '../activities/tools/write-file';

let base: string;
let workspace: string;
let outside: string;
const context = () => ({ signal: new AbortController().signal });
const read = (p: string, maxFileBytes = 64 * 1024) => runReadFile({ path: p }, { workspaceDir: workspace, maxFileBytes }, context());
const write = (p: string, content: string) => runWriteFile({ path: p, content }, { workspaceDir: workspace, maxFileBytes: 64 * 1024 }, context());

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'tools-files-'));
  workspace = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('write_file and read_file: inside the workspace', () => {
  it('writes a file, creating parent directories, and reads it back', async () => {
    expect(await write('notes/2024/todo.md', 'buy tea ☕')).toEqual({ code: 'ok', content: 'Wrote 11 bytes to notes/2024/todo.md.' });
    expect(await read('notes/2024/todo.md')).toEqual({ code: 'ok', content: 'buy tea ☕' });
    expect(await readFile(path.join(workspace, 'notes/2024/todo.md'), 'utf8')).toBe('buy tea ☕');
  });

  it('replaces an existing file', async () => {
    await write('a.txt', 'first version that is long');
    await write('a.txt', 'second');
    expect(await read('a.txt')).toEqual({ code: 'ok', content: 'second' });
  });

  it('accepts an absolute path inside the workspace and a ".." that stays inside', async () => {
    await write(path.join(workspace, 'abs.txt'), 'x');
    expect(await read('sub/../abs.txt')).toEqual({ code: 'ok', content: 'x' });
  });

  it('follows a symlink that stays inside the workspace', async () => {
    await write('real/data.txt', 'inside');
    await symlink(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    expect(await read('alias/data.txt')).toEqual({ code: 'ok', content: 'inside' });
    expect((await write('alias/more.txt', 'also inside')).code).toBe('ok');
    expect(await readFile(path.join(workspace, 'real/more.txt'), 'utf8')).toBe('also inside');
  });

  it('reports a missing file as an error result', async () => {
    expect(await read('nope.txt')).toEqual({ code: 'error', content: 'Cannot read: file not found: nope.txt.' });
  });

  it('reports a directory as an error result', async () => {
    await mkdir(path.join(workspace, 'dir'));
    expect(await read('dir')).toEqual({ code: 'error', content: 'Cannot read: dir is a directory.' });
    expect(await write('dir', 'x')).toEqual({ code: 'error', content: 'Cannot write: dir is a directory.' });
  });

  it('reports a file in the way of a directory as an error result', async () => {
    await write('file.txt', 'x');
    expect((await write('file.txt/child.txt', 'y')).code).toBe('error');
  });

  it('cuts a large file at maxFileBytes and says so', async () => {
    await write('big.txt', 'abcdefghijklmnopqrstuvwxyz');
    expect(await read('big.txt', 10)).toEqual({ code: 'ok', content: 'abcdefghij\n\n[file cut at 10 bytes of 26]' });
  });

  it('refuses to show a binary file', async () => {
    await writeFile(path.join(workspace, 'blob.bin'), Buffer.from([1, 0, 2]));
    expect(await read('blob.bin')).toEqual({ code: 'error', content: 'Cannot read: blob.bin is a binary file (3 bytes); this tool reads text only.' });
  });
});

describe('write_file and read_file: confinement', () => {
  it.each(['../outside/secret.txt', '../../etc/passwd', 'a/../../outside/secret.txt'])('rejects the traversal %s', async (p) => {
    const outcome = await read(p);
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain('is outside the workspace');
  });

  it('rejects an absolute path outside the workspace', async () => {
    expect((await read(path.join(outside, 'secret.txt'))).content).toContain('is outside the workspace');
    expect((await read('/etc/passwd')).content).toContain('is outside the workspace');
  });

  it('writes nothing outside through a traversal', async () => {
    const outcome = await write('../outside/planted.txt', 'gotcha');
    expect(outcome.code).toBe('error');
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
  });

  it('rejects a directory symlink that escapes, for reading and writing', async () => {
    await symlink(outside, path.join(workspace, 'escape'));
    expect(await read('escape/secret.txt')).toEqual({ code: 'error', content: 'Cannot read: path "escape/secret.txt" leads outside the workspace through a symlink.' });
    expect((await write('escape/planted.txt', 'gotcha')).content).toContain('leads outside the workspace through a symlink');
    expect((await write('escape/new/deeper.txt', 'gotcha')).code).toBe('error');
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
  });

  it('rejects a file symlink that escapes, and leaves its target unchanged', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'innocent.txt'));
    expect((await read('innocent.txt')).content).toContain('leads outside the workspace through a symlink');
    expect((await write('innocent.txt', 'overwritten')).code).toBe('error');
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('refuses to write through a dangling symlink, which would create its target', async () => {
    await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling.txt'));
    const outcome = await write('dangling.txt', 'gotcha');
    expect(outcome).toEqual({
      code: 'error',
      content: 'Cannot write: path "dangling.txt" goes through a symlink whose target does not exist; refusing to write through it.',
    });
    expect(existsSync(path.join(outside, 'not-yet.txt'))).toBe(false);
  });

  it('answers a name longer than the file system allows with an error result, for reading and writing', async () => {
    const long = `${'a'.repeat(300)}.md`;
    expect(await read(long)).toEqual({ code: 'error', content: `Cannot read: "${'a'.repeat(100)}… (303 characters)" is too long.` });
    expect(await write(long, 'x')).toEqual({ code: 'error', content: `Cannot write: "${'a'.repeat(100)}… (303 characters)" is too long.` });
    expect(await write(`notes/${long}`, 'x')).toMatchObject({ code: 'error', content: expect.stringMatching(/ is too long\.$/) });
  });

  it('rejects a NUL byte in the path', async () => {
    expect((await read('a\0b')).content).toContain('must not contain NUL');
  });

  it('refuses to read a file whose last component became a symlink after the check', async () => {
    await write('late.txt', 'inside');
    const checked = await resolveWorkspacePath(workspace, 'late.txt', 'read');
    if (!checked.ok) throw new Error(checked.message);
    await rm(path.join(workspace, 'late.txt'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'late.txt'));
    await expect(openInWorkspace(checked, 'read')).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it.each(['read', 'write'] as const)('refuses to %s through a parent directory swapped for a symlink after the check, and leaves the outside file as it was', async (mode) => {
    await write('sub/secret.txt', 'inside');
    const checked = await resolveWorkspacePath(workspace, 'sub/secret.txt', mode);
    if (!checked.ok) throw new Error(checked.message);
    // The race the check cannot see: between it and the open, "sub" becomes a way out.
    await rename(path.join(workspace, 'sub'), path.join(workspace, 'sub-moved'));
    await symlink(outside, path.join(workspace, 'sub'));
    const opened = await openInWorkspace(checked, mode);
    expect(opened).toEqual({ ok: false, message: 'path "sub/secret.txt" led outside the workspace when it was opened (a directory on the way changed)' });
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('stops before touching the disk when cancelled', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(runWriteFile({ path: 'x.txt', content: 'x' }, { workspaceDir: workspace, maxFileBytes: 10 }, { signal: controller.signal })).rejects.toThrow(
      'cancelled',
    );
    expect(existsSync(path.join(workspace, 'x.txt'))).toBe(false);
  });
});

describe('write_file and read_file: what is not a regular file', () => {
  it('answers a named pipe at once with an error result, for reading and writing, instead of waiting for a writer', async () => {
    execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
    expect(await read('pipe')).toEqual({ code: 'error', content: 'Cannot read: pipe is not a regular file (a named pipe).' });
    expect((await write('pipe', 'x')).code).toBe('error');
  });

  it('answers a socket with an error result', async () => {
    const socketPath = path.join(workspace, 'sock');
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect((await read('sock')).code).toBe('error');
      expect((await write('sock', 'x')).code).toBe('error');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
