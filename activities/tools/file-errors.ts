import { hasCode } from './workspace-path';

/**
 * File-system errors the model can act on (pick another path, create the directory). The
 * rest (EIO, ENOSPC, EMFILE) are the worker's trouble and are thrown as failures.
 */
const MODEL_ACTIONABLE: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'has a file where a directory is expected',
  EISDIR: 'is a directory',
  EACCES: 'is not accessible (permission denied)',
  EPERM: 'is not accessible (operation not permitted)',
  ELOOP: 'is a symlink, which this tool does not follow',
  // What opening a socket gives, and a named pipe for writing while nobody reads it.
  ENXIO: 'is not a regular file (a socket, or a named pipe nobody reads)',
  EEXIST: 'already exists as a different kind of entry',
  ENAMETOOLONG: 'is too long',
};

export function describeFileError(error: unknown, display: string): string | undefined {
  for (const [code, text] of Object.entries(MODEL_ACTIONABLE)) {
    if (hasCode(error, code)) return `${display} ${text}`;
  }
  return undefined;
}

/** How much of a path the model gave is quoted back before it was resolved: enough to spot it, bounded in history. */
const QUOTED_PATH_CHARS = 100;

/** The path as the model wrote it, for an error met while resolving it (there is no display path yet). */
export function quotedPath(requested: string): string {
  const cut = requested.length > QUOTED_PATH_CHARS ? `${requested.slice(0, QUOTED_PATH_CHARS)}… (${requested.length} characters)` : requested;
  return `"${cut}"`;
}
