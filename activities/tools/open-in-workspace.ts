import { constants, type Stats } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { hasCode, isInside, type CheckedPath } from './workspace-path';

export type OpenedFile = { ok: true; handle: FileHandle; stats: Stats } | { ok: false; message: string };

/**
 * `O_NOFOLLOW`: the last component is opened as itself, never as a symlink's target (the
 * checked path is already real, so a symlink there now was put there after the check).
 * `O_NONBLOCK`: a named pipe without a writer would otherwise hold the open, and with it a
 * libuv thread, beyond the activity's cancellation. No `O_TRUNC`: a write truncates only
 * after the file has been proved to be inside the workspace.
 */
const FLAGS = {
  read: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  write: constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
};

/**
 * Opens a path `resolveWorkspacePath` checked and proves the descriptor is a regular file
 * inside the workspace. The check and the open are two system calls: a directory on the
 * way swapped for a symlink in between would lead the open outside, so what was opened is
 * checked again, by the descriptor, not by the path. Errors of the open itself (ENOENT,
 * EISDIR, ELOOP, ENXIO for a socket) are thrown for `describeFileError`.
 *
 * What a race can still do: `O_CREAT` (and the caller's mkdir) may leave an empty file or
 * directory outside before the descriptor is checked; no byte is written to it.
 */
export async function openInWorkspace(checked: CheckedPath, mode: 'read' | 'write'): Promise<OpenedFile> {
  const handle = await open(checked.real, FLAGS[mode], 0o644);
  let opened: OpenedFile | undefined;
  try {
    const stats = await handle.stat();
    if (!(await opensInside(handle, stats, checked))) {
      opened = { ok: false, message: `path "${checked.display}" led outside the workspace when it was opened (a directory on the way changed)` };
    } else if (stats.isDirectory()) {
      opened = { ok: false, message: `${checked.display} is a directory` };
    } else if (!stats.isFile()) {
      opened = { ok: false, message: `${checked.display} is not a regular file (${kindOf(stats)})` };
    } else {
      opened = { ok: true, handle, stats };
    }
    return opened;
  } finally {
    if (opened?.ok !== true) await handle.close();
  }
}

/**
 * Linux names the file a descriptor holds in /proc/self/fd, whatever happened to the path
 * since. Without /proc (macOS), the checked path resolved again must lead inside to the very
 * file opened; that narrows the race to a swap and a swap back within two system calls.
 */
async function opensInside(handle: FileHandle, stats: Stats, checked: CheckedPath): Promise<boolean> {
  const held = await descriptorPath(handle);
  if (held !== undefined) return isInside(checked.root, held);
  const now = await realpath(checked.real);
  if (!isInside(checked.root, now)) return false;
  const there = await stat(now);
  return there.dev === stats.dev && there.ino === stats.ino;
}

async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a special file';
}
