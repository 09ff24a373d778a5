import type { ToolClass } from './tool-definition';

/**
 * Whether a side-effecting call waits for a human, by the session's `--approve-tools`
 * patterns: `*` (every side-effecting tool), an exact name, or a prefix ending in `*`,
 * e.g. `mcp__fs__*` for every tool of the MCP server `fs`.
 */
export function approvalRequiredFor(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => p === name || (p.endsWith('*') && name.startsWith(p.slice(0, -1))));
}

/**
 * Whether a call waits for a human, in either lane. A read-only call waits only when a
 * pattern names its tool (an exact name or a prefix; the bare `*` means every side-effecting
 * tool): the lane of an MCP tool is the server's own word, and a tool the operator named
 * must not slip past the decision because its server calls it read-only.
 */
export function waitsForApproval(patterns: readonly string[], name: string, lane: ToolClass): boolean {
  if (lane === 'side_effecting') return approvalRequiredFor(patterns, name);
  return approvalRequiredFor(
    patterns.filter((p) => p !== '*'),
    name,
  );
}
