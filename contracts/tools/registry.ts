import { z } from 'zod';
import type { ToolCall, ToolSpec } from '../messages';
import { calculatorTool } from './calculator';
import { httpRequestTool } from './http-request';
import { readFileTool } from './read-file';
import type { AnyToolDefinition, ToolClass } from './tool-definition';
import { validateToolInput } from './validate-tool-input';
import { writeFileTool } from './write-file';

export type { AnyToolDefinition, ToolClass, ToolDefinition, ToolTimeouts } from './tool-definition';
export { defineBuiltinTool } from './tool-definition';
export { idempotencyKey } from './idempotency-key';
export { validateToolInput } from './validate-tool-input';

/** The tools every session has. Their names and input fields are part of the interface. */
export const BUILTIN_TOOLS = Object.freeze([calculatorTool, httpRequestTool, readFileTool, writeFileTool] as const);
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];
export type BuiltinToolName = BuiltinTool['name'];

export function findTool(name: string, tools: readonly AnyToolDefinition[] = BUILTIN_TOOLS): AnyToolDefinition | undefined {
  return tools.find((tool) => tool.name === name);
}

/**
 * The tools as the provider request lists them. The JSON Schema is derived from the zod
 * schema, so the model is told exactly what `prepareToolCall` will accept. The input side
 * of the schema is used, because that is what the model writes.
 */
export function toolSpecs(tools: readonly AnyToolDefinition[] = BUILTIN_TOOLS): ToolSpec[] {
  const seen = new Set<string>();
  return tools.map((tool) => {
    // Two tools with one name would make dispatch depend on list order.
    if (seen.has(tool.name)) throw new Error(`duplicate tool name "${tool.name}" in the tool list`);
    seen.add(tool.name);
    // `$schema` is noise to providers, and some (Gemini) reject unknown keywords.
    const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
    return { name: tool.name, description: tool.description, inputSchema };
  });
}

export type PreparedToolCall =
  | { kind: 'dispatch'; tool: AnyToolDefinition; input: unknown; toolClass: ToolClass }
  /** Not dispatched: `content` is the error result the model reads, and the loop goes on. */
  | { kind: 'invalid'; content: string };

/** How much of unparseable argument text to quote back: enough to spot the mistake, bounded in history. */
const QUOTED_JSON_CHARS = 200;

/**
 * Decides whether a call the model made can be dispatched. Every rejection is an ordinary
 * error result for the model, never a step failure: the model made a mistake it can fix.
 */
export function prepareToolCall(call: ToolCall, tools: readonly AnyToolDefinition[] = BUILTIN_TOOLS): PreparedToolCall {
  const tool = findTool(call.name, tools);
  if (tool === undefined) {
    const available = tools.map((t) => t.name).join(', ') || '(none)';
    return { kind: 'invalid', content: `Tool call rejected: there is no tool named "${call.name}". Available tools: ${available}.` };
  }
  if (call.invalidJson !== undefined) {
    const quoted =
      call.invalidJson.length > QUOTED_JSON_CHARS ? `${call.invalidJson.slice(0, QUOTED_JSON_CHARS)}… (${call.invalidJson.length} characters)` : call.invalidJson;
    return {
      kind: 'invalid',
      content:
        `Tool call rejected: the arguments for "${tool.name}" are not a valid JSON object: ${JSON.stringify(quoted)}. ` +
        'Send the arguments as one JSON object that matches the tool\'s input schema.',
    };
  }
  const validation = validateToolInput(tool, call.input);
  if (!validation.ok) return { kind: 'invalid', content: validation.content };
  return { kind: 'dispatch', tool, input: validation.input, toolClass: tool.classify(validation.input) };
}
