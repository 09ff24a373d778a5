import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { WriteFileInput } from '../../contracts/tools/write-file';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { describeFileError, quotedPath } from './file-errors';
import { openInWorkspace } from './open-in-workspace';
import type { FileToolOptions } from './read-file';
import type { ToolRunContext } from './tool-run-context';
import { resolveWorkspacePath } from './workspace-path';

export async function runWriteFile(input: WriteFileInput, options: FileToolOptions, context: ToolRunContext): Promise<ToolOutcome> {
  context.signal.throwIfAborted();
  const bytes = Buffer.from(input.content, 'utf8');
  // Until the path is resolved, errors (a name too long for the file system) quote what the model wrote.
  let display = quotedPath(input.path);
  try {
    const resolved = await resolveWorkspacePath(options.workspaceDir, input.path, 'write');
    if (!resolved.ok) return { code: 'error', content: `Cannot write: ${resolved.message}.` };
    display = resolved.display;
    await mkdir(path.dirname(resolved.real), { recursive: true });
    const opened = await openInWorkspace(resolved, 'write');
    if (!opened.ok) return { code: 'error', content: `Cannot write: ${opened.message}.` };
    const { handle } = opened;
    try {
      // Opened without O_TRUNC, so that nothing is cut before the descriptor was proved inside.
      await handle.truncate(0);
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const described = describeFileError(error, display);
    if (described === undefined) throw error;
    return { code: 'error', content: `Cannot write: ${described}.` };
  }
  return { code: 'ok', content: `Wrote ${bytes.length} bytes to ${display}.` };
}
