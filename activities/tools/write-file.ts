import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import type { WriteFileInput } from '../../contracts/tools/write-file';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { describeFileError } from './file-errors';
import type { FileToolOptions } from './read-file';
import type { ToolRunContext } from './tool-run-context';
import { resolveWorkspacePath } from './workspace-path';

/**
 * `O_NOFOLLOW` closes the last gap of the path check: the final component is opened as
 * itself, never as a symlink's target. The path returned by the check is already real,
 * so a legitimate symlink inside the workspace has been resolved before this point.
 */
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

export async function runWriteFile(input: WriteFileInput, options: FileToolOptions, context: ToolRunContext): Promise<ToolOutcome> {
  context.signal.throwIfAborted();
  const resolved = await resolveWorkspacePath(options.workspaceDir, input.path, 'write');
  if (!resolved.ok) return { code: 'error', content: `Cannot write: ${resolved.message}.` };
  const bytes = Buffer.from(input.content, 'utf8');
  try {
    await mkdir(path.dirname(resolved.real), { recursive: true });
    const handle = await open(resolved.real, WRITE_FLAGS, 0o644);
    try {
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const described = describeFileError(error, resolved.display);
    if (described === undefined) throw error;
    return { code: 'error', content: `Cannot write: ${described}.` };
  }
  return { code: 'ok', content: `Wrote ${bytes.length} bytes to ${resolved.display}.` };
}
