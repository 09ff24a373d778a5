import { Context } from '@temporalio/activity';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';

/** A stand-in for a long tool: it heartbeats, so a cancellation reaches it, and never finishes on its own. */
export async function untilCancelled(): Promise<ToolOutcome> {
  const ctx = Context.current();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), 100);
  try {
    // Rejects with the cancellation, which is how the activity ends.
    return await ctx.cancelled;
  } finally {
    clearInterval(beat);
  }
}
