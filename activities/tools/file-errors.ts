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
  ELOOP: 'is a symlink, which this tool does not write through',
  EEXIST: 'already exists as a different kind of entry',
  ENAMETOOLONG: 'is too long',
};

export function describeFileError(error: unknown, display: string): string | undefined {
  for (const [code, text] of Object.entries(MODEL_ACTIONABLE)) {
    if (hasCode(error, code)) return `${display} ${text}`;
  }
  return undefined;
}
