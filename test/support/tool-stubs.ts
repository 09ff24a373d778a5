import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';

/** A stand-in for a long tool: it heartbeats, so a cancellation reaches it, and never finishes on its own. */
export async function untilCancelled(): Promise<ToolOutcome> {
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat();
    await Promise.race([ctx.cancelled, sleep(100)]);
  }
}
