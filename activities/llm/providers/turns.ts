/** One wire-format turn: a role and its content blocks, whatever a block is for that provider. */
export interface Turn<Role extends string, Block> {
  role: Role;
  blocks: Block[];
}

/**
 * Anthropic and Gemini want strictly alternating turns, and the session log does not
 * alternate: several tool results in a row are several messages, and a user may type
 * while tools run. So consecutive turns of one role are merged into one, and within a
 * merged turn the tool results go FIRST, because Anthropic rejects a user turn whose
 * `tool_result` blocks follow text ("tool_result blocks must come first").
 * Turns with no blocks are dropped: both APIs reject empty content.
 */
export function mergeTurns<Role extends string, Block>(turns: Turn<Role, Block>[], isToolResult: (b: Block) => boolean): Turn<Role, Block>[] {
  const merged: Turn<Role, Block>[] = [];
  for (const turn of turns) {
    if (turn.blocks.length === 0) continue;
    const last = merged[merged.length - 1];
    if (last && last.role === turn.role) last.blocks.push(...turn.blocks);
    else merged.push({ role: turn.role, blocks: [...turn.blocks] });
  }
  for (const turn of merged) {
    turn.blocks = [...turn.blocks.filter(isToolResult), ...turn.blocks.filter((b) => !isToolResult(b))];
  }
  return merged;
}
