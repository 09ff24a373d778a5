import type { Client } from '@temporalio/client';
import type { SessionEvent } from '../contracts/session-log';
import { describeProgress, readProgress, type Progress } from './progress';
import type { SessionHandle } from './sessions';

/** A sub-agent's call the parent waits on: its child session and the agent it runs (docs/sub-agents.md). */
export interface ChildCall {
  workflowId: string;
  agent: string;
}

/**
 * The parent's sub-agent calls that have started and not been answered, from its log as
 * `watch` reads it: a `tool/call` with `child` opens one, its `tool/result` closes it.
 */
export class OpenChildCalls {
  readonly #open = new Map<string, ChildCall>();

  observe(event: SessionEvent): void {
    if (event.type === 'tool/call' && event.child) this.#open.set(callKey(event), event.child);
    else if (event.type === 'tool/result') this.#open.delete(callKey(event));
  }

  /** The newest open one: side-effecting calls, a sub-agent's among them, run one at a time. */
  latest(): ChildCall | undefined {
    return [...this.#open.values()].at(-1);
  }
}

const callKey = (e: { turn: number; step: number; callId: string }) => `${e.turn}/${e.step}/${e.callId}`;

/** The child session's progress as its parent's watch shows it, read as watch reads any session's; undefined when it does not answer (not started yet, or no worker). */
export function readChildProgress(client: Client, child: ChildCall): Promise<Progress | undefined> {
  const handle = client.workflow.getHandle(child.workflowId) as SessionHandle;
  return readProgress(client, handle, () => Promise.resolve(undefined)).catch(() => undefined);
}

/**
 * The child's own lines under its agent's name, e.g.
 * `researcher · step 3/20 · llm anthropic:… · retrying in 4 s (attempt 2/11): overloaded`:
 * a child runs one turn, so its agent says more than its turn number would. Nothing once
 * the child no longer runs: the parent's next event is the call's result.
 */
export function childProgressLines(child: ChildCall, progress: Progress, now: number): string[] {
  if (progress.state.status !== 'running') return [];
  const turn = `turn ${progress.state.turn} · `;
  return describeProgress(progress, now).map((line) => (line.startsWith(turn) ? `${child.agent} · ${line.slice(turn.length)}` : `${child.agent} · ${line}`));
}
