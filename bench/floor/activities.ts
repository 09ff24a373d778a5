import { Context } from '@temporalio/activity';

/**
 * The floor's activities do nothing, except that `floorLlm` notes when it ran: the
 * benchmark's per-step latency is the time between two step starts, and for our own
 * loop that is when the scripted LLM receives a request.
 */
export interface FloorActivities {
  floorLlm(step: number): Promise<void>;
  floorTool(step: number, call: number): Promise<void>;
}

/** Step start times (epoch ms) by workflow id, drained by the benchmark between measurements. */
export type StepProbes = Map<string, number[]>;

export function createFloorActivities(probes: StepProbes): FloorActivities {
  return {
    async floorLlm() {
      // Always set for an activity a workflow scheduled; only standalone activities lack it.
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? 'standalone';
      const times = probes.get(workflowId) ?? [];
      times.push(Date.now());
      probes.set(workflowId, times);
    },
    async floorTool() {},
  };
}
