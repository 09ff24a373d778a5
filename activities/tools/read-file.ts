import { TextDecoder } from 'node:util';
import type { ReadFileInput } from '../../contracts/tools/read-file';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { describeFileError, quotedPath } from './file-errors';
import { openInWorkspace } from './open-in-workspace';
import type { ToolRunContext } from './tool-run-context';
import { resolveWorkspacePath } from './workspace-path';

export interface FileToolOptions {
  workspaceDir: string;
  /** Bytes of a file shown to the model; the rest is cut, with a note. */
  maxFileBytes: number;
}

export async function runReadFile(input: ReadFileInput, options: FileToolOptions, context: ToolRunContext): Promise<ToolOutcome> {
  context.signal.throwIfAborted();
  // Until the path is resolved, errors (a name too long for the file system) quote what the model wrote.
  let display = quotedPath(input.path);
  try {
    const resolved = await resolveWorkspacePath(options.workspaceDir, input.path, 'read');
    if (!resolved.ok) return { code: 'error', content: `Cannot read: ${resolved.message}.` };
    display = resolved.display;
    const opened = await openInWorkspace(resolved, 'read');
    if (!opened.ok) return { code: 'error', content: `Cannot read: ${opened.message}.` };
    const { handle, stats } = opened;
    try {
      // Read one byte past the cap: the only reliable way to know there is more (size lies for /proc-like files).
      const buffer = Buffer.alloc(options.maxFileBytes + 1);
      let length = 0;
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      const truncated = length > options.maxFileBytes;
      const bytes = buffer.subarray(0, Math.min(length, options.maxFileBytes));
      if (bytes.includes(0)) {
        return { code: 'error', content: `Cannot read: ${resolved.display} is a binary file (${stats.size} bytes); this tool reads text only.` };
      }
      // `stream: true` holds back a multi-byte character cut by the cap instead of printing U+FFFD.
      const text = new TextDecoder('utf-8').decode(bytes, { stream: truncated });
      return { code: 'ok', content: truncated ? `${text}\n\n[file cut at ${options.maxFileBytes} bytes of ${stats.size}]` : text };
    } finally {
      await handle.close();
    }
  } catch (error) {
    const described = describeFileError(error, display);
    if (described === undefined) throw error;
    return { code: 'error', content: `Cannot read: ${described}.` };
  }
}
