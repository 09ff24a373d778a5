import { z } from 'zod';
import { defineBuiltinTool } from './tool-definition';

export const WorkspacePathSchema = z
  .string({ error: 'path must be a string' })
  .min(1, { error: 'path must not be empty' })
  .max(4_096, { error: 'path must be at most 4096 characters' })
  .describe('A path relative to the workspace, e.g. "notes/todo.md".');

export const ReadFileInputSchema = z.strictObject({ path: WorkspacePathSchema });
export type ReadFileInput = z.infer<typeof ReadFileInputSchema>;

export const readFileTool = defineBuiltinTool({
  name: 'read_file',
  description:
    'Reads a UTF-8 text file from the workspace and returns its content (cut at a size limit). ' +
    'Paths are relative to the workspace; paths that leave it, also through symlinks, are rejected.',
  input: ReadFileInputSchema,
  classify: () => 'read_only',
  timeouts: { startToCloseMs: 10_000 },
});
