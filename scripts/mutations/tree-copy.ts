import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A private copy of the project's source (tracked and untracked, not ignored files) in a
 * temporary folder, with `node_modules` and `.temporal` linked rather than copied. The
 * mutation check breaks this copy, never the working tree, which other people may be
 * editing or testing at the same time.
 */
export interface TreeCopy {
  root: string;
  /** Applies one edit; `find` must occur exactly once. Returns a function that undoes it. */
  edit(file: string, find: string, replace: string): Promise<() => Promise<void>>;
  remove(): Promise<void>;
}

const LINKED = ['node_modules', '.temporal'];
/**
 * Folders beside the project that tests reach by a relative path (`../shared/real-streams`
 * holds the recorded provider streams): linked beside the copy, so the path still resolves.
 */
const LINKED_SIBLINGS = ['shared'];

export async function copyTree(projectRoot: string): Promise<TreeCopy> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'mutations-'));
  const root = path.join(workspace, 'tree');
  const { stdout } = await promisify(execFile)('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: projectRoot, maxBuffer: 64 * 1024 * 1024 });
  const files = stdout.split('\0').filter((f) => f !== '');
  for (const file of files) {
    const target = path.join(root, file);
    await mkdir(path.dirname(target), { recursive: true });
    // A file listed but deleted in the working tree is simply not copied.
    await cp(path.join(projectRoot, file), target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  for (const dir of LINKED) await symlink(path.join(projectRoot, dir), path.join(root, dir), 'dir');
  for (const dir of LINKED_SIBLINGS) {
    const sibling = path.join(projectRoot, '..', dir);
    if (await stat(sibling).then(() => true, () => false)) await symlink(sibling, path.join(workspace, dir), 'dir');
  }
  return {
    root,
    async edit(file, find, replace) {
      const target = path.join(root, file);
      const original = await readFile(target, 'utf8');
      const occurrences = original.split(find).length - 1;
      if (occurrences !== 1) throw new Error(`${file}: the text to break occurs ${occurrences} times, not once; update the mutation to the current source`);
      await writeFile(target, original.replace(find, replace));
      return () => writeFile(target, original);
    },
    remove: () => rm(workspace, { recursive: true, force: true }),
  };
}
