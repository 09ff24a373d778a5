/**
 * Bad custom tool definitions that `defineTool` cannot see alone fail where the worker is
 * built, `new AgentPlugin(…)` (what `createAgentWorker` and the turnkey worker are built on),
 * in one line naming the tool and the problem; the ones `defineTool` sees are in
 * test/custom-tools.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../contracts/agents/agent-definition';
import { defineTool } from '../contracts/tools/custom-tool';
import { AgentPlugin } from '../worker/agent-plugin';

const lookup = defineTool({ name: 'lookup', description: 'Looks an order up.', input: z.object({ id: z.string() }), sideEffects: false, run: ({ id }) => id });

describe('a worker refuses custom tools that cannot work, at its start, in one line naming the tool', () => {
  it("refuses an agent's tool that has the name of another of the worker's tools", () => {
    const other = defineTool({ ...lookup, description: 'Looks an order up, another way.' });
    const agent = defineAgent({ name: 'support', model: 'anthropic:claude-sonnet-4-5', tools: [other] });
    expect(() => new AgentPlugin({ tools: [lookup], agents: [agent] })).toThrow(/^worker tools: "lookup" is defined twice$/);
  });

  it.each([
    ['a date', z.object({ when: z.date() }) as z.ZodType, 'Date cannot be represented in JSON Schema'],
    ['a map', z.object({ stock: z.map(z.string(), z.number()) }) as z.ZodType, 'Map cannot be represented in JSON Schema'],
  ])('refuses an input with %s, which cannot be offered to a model as JSON Schema', (_, input, problem) => {
    const tool = defineTool({ name: 'schedule', description: 'Schedules.', input, sideEffects: true, run: () => 'ok' });
    expect(() => new AgentPlugin({ tools: [lookup, tool] })).toThrow(new RegExp(`^worker tools: "schedule": input: cannot be offered to a model as JSON Schema: ${problem}$`));
  });

  it('takes one definition named by the worker and by an agent as one tool', () => {
    const agent = defineAgent({ name: 'support', model: 'anthropic:claude-sonnet-4-5', tools: [lookup] });
    expect(() => new AgentPlugin({ tools: [lookup], agents: [agent] })).not.toThrow();
  });
});
