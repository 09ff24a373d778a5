import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config-error';
import { SessionInputSchema } from '../contracts/api';
import type { z } from 'zod';
import { MODEL_WINDOWS, ModelWindowsFileSchema, type ModelWindowTable } from '../contracts/model-windows';

/**
 * The model windows the client resolves a session's `contextWindow` from: MODEL_WINDOWS,
 * with the entries of the JSON file AGENT_MODELS_FILE names replacing or adding to it.
 * A mistake in the file is one line naming the variable and the entry; the file holds no
 * secrets, but its text is still never repeated, only its path and the entry's name.
 */
export function loadModelWindows(path: string | undefined): ModelWindowTable {
  if (path === undefined) return MODEL_WINDOWS;
  const parsed = ModelWindowsFileSchema.safeParse(readJson(path));
  if (!parsed.success) throw new ConfigError(`AGENT_MODELS_FILE: ${describeIssue(parsed.error.issues[0])}`);
  for (const [model, window] of Object.entries(parsed.data)) {
    // The window a session is given must be one it accepts: refused here, not at every start with this model.
    const accepted = SessionInputSchema.shape.contextWindow.safeParse(window.contextWindow);
    if (!accepted.success) throw new ConfigError(`AGENT_MODELS_FILE: entry ${JSON.stringify(model)}: contextWindow ${accepted.error.issues[0]?.message ?? 'invalid'}`);
  }
  return { ...MODEL_WINDOWS, ...parsed.data };
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // Node's message is `ENOENT: no such file or directory, open 'x'`: the part before the path is the reason.
    const reason = (error instanceof Error ? error.message : String(error)).split(',')[0];
    throw new ConfigError(`AGENT_MODELS_FILE: cannot read ${JSON.stringify(path)}: ${reason}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the mistake: only the file is named.
    throw new ConfigError(`AGENT_MODELS_FILE: ${JSON.stringify(path)} is not valid JSON`);
  }
}

/** `entry "openai:x": contextWindow: must be …`; a bad name is the entry's own mistake. */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (!issue || issue.path.length === 0) return 'must be a JSON object of "provider:model": { "contextWindow": N, "maxOutputTokens": N } entries';
  const [entry, ...field] = issue.path;
  const what = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  return `entry ${JSON.stringify(String(entry))}: ${field.length > 0 ? `${field.join('.')}: ` : ''}${what}`;
}
