import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './activities';
import type { IoFloorActivities } from './io-activities';

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

const { ioFloorLlm, ioFloorTool } = proxyActivities<IoFloorActivities>({ startToCloseTimeout: '1 minute' });

/**
 * The floor that does the agent's I/O (issue #32 §1): the same step pattern, but its LLM
 * activity sends the agent's HTTP request to the scripted LLM and parses its stream, and its
 * tool activities run the real tools (./io-activities.ts). The agent's step over this one's
 * is orchestration alone. Nothing else is recorded: no log, no search attributes, no queries.
 */
export async function ioFloorSession(input: { model: string; text: string; steps: number }): Promise<number> {
  let results: Awaited<ReturnType<typeof ioFloorTool>>[] | undefined;
  for (let step = 1; step <= input.steps; step++) {
    const calls = await ioFloorLlm({ model: input.model, text: input.text, ...(results ? { results } : {}) });
    if (calls.length === 0) return step;
    results = await Promise.all(calls.map((call) => ioFloorTool(call)));
  }
  return input.steps;
}
