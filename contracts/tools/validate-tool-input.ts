import type { z } from 'zod';
import type { ToolDefinition } from './tool-definition';

export type ToolInputValidation<I> = { ok: true; input: I } | { ok: false; content: string };

/**
 * The issues a refusal lists, and the characters of each. The refusal is a tool result the
 * model reads and the log (and a lanes decision's marker) keeps: arguments with ten
 * thousand bad entries must not become a result of megabytes. The first ones are enough
 * for the model to fix its call.
 */
export const LISTED_ISSUES = 20;
const ISSUE_CHARS = 300;

/**
 * Parses a tool's arguments with its schema. Used by the workflow before dispatch and by
 * the activity again, so both sides reject the same input with the same words.
 */
export function validateToolInput<I>(tool: Pick<ToolDefinition<I>, 'name' | 'input'>, raw: unknown): ToolInputValidation<I> {
  const parsed = tool.input.safeParse(raw);
  if (parsed.success) return { ok: true, input: parsed.data };
  const { issues } = parsed.error;
  const lines = issues.slice(0, LISTED_ISSUES).map((issue) => `- ${clip(describeIssue(issue, raw))}`);
  if (issues.length > LISTED_ISSUES) lines.push(`- and ${issues.length - LISTED_ISSUES} more`);
  return {
    ok: false,
    content: [`Tool call rejected: invalid arguments for "${tool.name}":`, ...lines, 'Fix the arguments and call the tool again.'].join('\n'),
  };
}

const clip = (line: string) => (line.length <= ISSUE_CHARS ? line : `${line.slice(0, ISSUE_CHARS - 1)}…`);

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const at = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return `${at}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
  }
  // zod's default for a missing field is "expected string, received undefined", which reads
  // like a type confusion to the model; say what it has to do instead.
  if (issue.code === 'invalid_type' && valueAt(raw, issue.path) === undefined) return `${at}: is required`;
  if (issue.code === 'invalid_key' && issue.issues.length > 0) return `${at}: ${issue.issues.map((i) => i.message).join('; ')}`;
  return `${at}: ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'arguments';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}
