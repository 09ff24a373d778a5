import { ApplicationFailure } from '@temporalio/activity';
import { TOOL_ERROR_TYPES } from '../../contracts/errors';
import { checkCustomTools, type CustomTool } from '../../contracts/tools/custom-tool';
import type { CustomToolActivities, CustomToolLaneDecision, CustomToolOffer } from '../../contracts/tools/custom-tool-offer';
import { validateToolInput } from '../../contracts/tools/validate-tool-input';
import { laneOf } from './lane';
import { offerOf } from './offer';
import { runCustomTool } from './run-custom-tool';

/**
 * The activities of the worker's custom tools. The tools are checked here, once, when the
 * worker is built: a duplicate name, or an input that cannot be offered as JSON Schema, fails
 * its start in one line.
 */
export function createCustomToolActivities(tools: readonly CustomTool[]): CustomToolActivities {
  const byName = checkCustomTools(tools);
  const offers = new Map([...byName.values()].map((tool) => [tool.name, offerOf(tool)]));
  return {
    async listCustomTools({ names }) {
      const unknown = names.filter((name) => !byName.has(name));
      if (unknown.length > 0) {
        const known = [...byName.keys()].join(', ') || '(none)';
        throw ApplicationFailure.create({
          type: TOOL_ERROR_TYPES.unknownCustomTool,
          message: `listCustomTools: this worker has no custom tool ${unknown.map((n) => `"${n}"`).join(', ')}; it has ${known}`,
          nonRetryable: true,
        });
      }
      return names.map((name) => offers.get(name) as CustomToolOffer);
    },
    runCustomTool: (request) => runCustomTool(byName, request),
    async decideCustomToolLanes({ calls }) {
      return calls.map(({ name, input }): CustomToolLaneDecision => {
        const tool = byName.get(name);
        // Dispatched anyway, in the lane that never repeats it: the call's activity answers it.
        if (!tool) return { lane: 'side_effecting' };
        const parsed = validateToolInput(tool, input);
        return parsed.ok ? { lane: laneOf(tool, parsed.input) } : { invalid: parsed.content };
      });
    },
  };
}
