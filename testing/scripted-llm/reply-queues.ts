import type { ScriptedReply } from './script';

/**
 * One FIFO of replies per model name. Keying by model is what lets concurrent tests and
 * sessions share one server: each uses its own model name and never pops another's reply.
 */
export class ReplyQueues {
  private readonly queues = new Map<string, ScriptedReply[]>();

  push(model: string, replies: readonly ScriptedReply[]): number {
    const queue = this.queues.get(model) ?? [];
    for (const reply of replies) queue.push(reply);
    this.queues.set(model, queue);
    return queue.length;
  }

  shift(model: string): ScriptedReply | undefined {
    return this.queues.get(model)?.shift();
  }

  pending(model: string): number {
    return this.queues.get(model)?.length ?? 0;
  }

  /** Drops the model's unplayed replies and says how many there were. */
  clear(model: string): number {
    const dropped = this.pending(model);
    this.queues.delete(model);
    return dropped;
  }
}
