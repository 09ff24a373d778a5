import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

export const WORKSPACE_ENV = 'AGENT_WORKSPACE';

/** `real` has every existing component resolved; `root` is the workspace's realpath; `display` is what the model is shown. */
export interface CheckedPath {
  ok: true;
  root: string;
  real: string;
  display: string;
}

export type WorkspacePath = CheckedPath | { ok: false; message: string };

/**
 * Maps a path the model gave to a real path inside the workspace, or says why not.
 *
 * Two checks, because each misses what the other catches: the lexical one rejects
 * `../secret` and absolute paths elsewhere before touching the disk; the realpath one
 * rejects a symlink inside the workspace that points out of it. Both compare against the
 * workspace's own realpath, so a workspace reached through a symlink (macOS /tmp) works.
 *
 * For a write the target may not exist yet, so the deepest existing ancestor is resolved
 * instead, and a target that is a dangling symlink is refused: writing through it would
 * create its target wherever it points.
 *
 * A directory swapped for a symlink between this check and the open is caught after the
 * open, by the descriptor (open-in-workspace.ts).
 */
export async function resolveWorkspacePath(workspaceDir: string, requested: string, mode: 'read' | 'write'): Promise<WorkspacePath> {
  if (requested.includes('\0')) return { ok: false, message: 'path must not contain NUL characters' };
  const root = await realpath(workspaceDir);
  const lexicalBase = path.resolve(workspaceDir);
  const lexical = path.resolve(lexicalBase, requested);
  if (!isInside(lexicalBase, lexical) && !isInside(root, lexical)) {
    return { ok: false, message: `path "${requested}" is outside the workspace; use a path relative to the workspace, without ".." leaving it` };
  }
  const display = toDisplay(path.relative(isInside(lexicalBase, lexical) ? lexicalBase : root, lexical));
  const escaped: WorkspacePath = { ok: false, message: `path "${requested}" leads outside the workspace through a symlink` };

  if (mode === 'read') {
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (error) {
      if (hasCode(error, 'ENOENT') || hasCode(error, 'ENOTDIR')) return { ok: false, message: `file not found: ${display}` };
      if (hasCode(error, 'ELOOP')) return { ok: false, message: `path "${requested}" has a symlink loop` };
      throw error;
    }
    return isInside(root, real) ? { ok: true, root, real, display } : escaped;
  }

  // Walk up to the deepest entry that exists (lstat: a dangling symlink exists too).
  let existing = lexical;
  const missing: string[] = [];
  for (;;) {
    const stats = await lstatOrUndefined(existing);
    if (stats !== undefined) break;
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let realExisting: string;
  try {
    realExisting = await realpath(existing);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return { ok: false, message: `path "${requested}" goes through a symlink whose target does not exist; refusing to write through it` };
    if (hasCode(error, 'ELOOP')) return { ok: false, message: `path "${requested}" has a symlink loop` };
    throw error;
  }
  if (!isInside(root, realExisting)) return escaped;
  return { ok: true, root, real: path.join(realExisting, ...missing), display };
}

export function isInside(base: string, candidate: string): boolean {
  const relative = path.relative(base, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function toDisplay(relative: string): string {
  return relative === '' ? '.' : relative.split(path.sep).join('/');
}

async function lstatOrUndefined(target: string) {
  try {
    return await lstat(target);
  } catch (error) {
    // ENOTDIR: a file where a directory should be; the write reports it when it gets there.
    if (hasCode(error, 'ENOENT') || hasCode(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

export function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
