/**
 * Whether a side-effecting call waits for a human, by the session's `--approve-tools`
 * patterns: `*` (every side-effecting tool), an exact name, or a prefix ending in `*`,
 * e.g. `mcp__fs__*` for every tool of the MCP server `fs`.
 */
export function approvalRequiredFor(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => p === name || (p.endsWith('*') && name.startsWith(p.slice(0, -1))));
}
