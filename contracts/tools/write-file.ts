import { z } from 'zod';
import { WorkspacePathSchema } from './read-file';
import { defineBuiltinTool } from './tool-definition';

export const WriteFileInputSchema = z.strictObject({
  path: WorkspacePathSchema,
  content: z
    .string({ error: 'content must be a string' })
    .max(1_000_000, { error: 'content must be at most 1000000 characters' })
    .describe('The complete new content of the file, as UTF-8 text.'),
});
export type WriteFileInput = z.infer<typeof WriteFileInputSchema>;

export const writeFileTool = defineBuiltinTool({
  name: 'write_file',
  description:
    'Creates or replaces a text file in the workspace with the given content, creating parent ' +
    'directories as needed. Paths are relative to the workspace; paths that leave it, also through ' +
    'symlinks, are rejected.',
  input: WriteFileInputSchema,
  // Rewriting the same content is harmless, but the call still changes the world, and a
  // read of the same path in the same step must see a defined order.
  classify: () => 'side_effecting',
  timeouts: { startToCloseMs: 10_000 },
});
