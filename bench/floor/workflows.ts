import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './activities';

/**
 * The floor: the least a Temporal workflow can do to run our step pattern. Each step is
 * one activity, then three in parallel (the LLM call, then three read-only tools), and the
 * last step is the single call alone, as in a turn whose model answers at the end. The
 * activities do nothing, so every millisecond a step takes here is Temporal's own cost:
 * workflow tasks, activity dispatch and the round trips between them. Nothing else is
 * recorded: no log, no search attributes, no queries.
 */
const { floorLlm, floorTool } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorSession(input: { steps: number }): Promise<number> {
  for (let step = 1; step <= input.steps; step++) {
    await floorLlm(step);
    if (step === input.steps) break;
    await Promise.all([floorTool(step, 1), floorTool(step, 2), floorTool(step, 3)]);
  }
  return input.steps;
}
