import type { CustomTool } from '../../contracts/tools/custom-tool';
import type { ToolClass } from '../../contracts/tools/tool-definition';

/** The lane of one call, by the worker's own definition; a `sideEffects` function that throws counts as side-effecting, the lane that never repeats a call. */
export function laneOf<I>(tool: CustomTool<I>, input: I): ToolClass {
  const { sideEffects } = tool;
  if (typeof sideEffects === 'boolean') return sideEffects ? 'side_effecting' : 'read_only';
  try {
    return sideEffects(input) ? 'side_effecting' : 'read_only';
  } catch {
    return 'side_effecting';
  }
}
