import { z } from 'zod';
import { ToolDefinitionError, type CustomTool } from '../../contracts/tools/custom-tool';
import type { CustomToolOffer } from '../../contracts/tools/custom-tool-offer';
import { MCP_LIST_LIMITS } from '../mcp/list-tools';

/**
 * What a session records of a tool: its name, description, lane rule and limits, and its
 * input's JSON Schema as the model writes it (the input side of the zod schema). `$schema`
 * is left out: noise to providers, and Gemini refuses unknown keywords. Made when the worker
 * starts: an input JSON Schema cannot say (a date, a bigint, a map) stops it there, in one
 * line naming the tool, rather than failing every session's listing later.
 */
export function offerOf(tool: CustomTool): CustomToolOffer {
  const { $schema: _ignored, ...inputSchema } = inputJsonSchema(tool);
  // An offer goes into history and every LLM request of the session: bounded as an MCP server's listing is.
  const { descriptionChars, schemaChars } = MCP_LIST_LIMITS;
  if (tool.description.length > descriptionChars) throw new ToolDefinitionError(`worker tools: "${tool.name}": description: must be at most ${descriptionChars} characters (it is ${tool.description.length})`);
  const schemaLength = JSON.stringify(inputSchema).length;
  if (schemaLength > schemaChars) throw new ToolDefinitionError(`worker tools: "${tool.name}": input: its JSON Schema must be at most ${schemaChars} characters (it is ${schemaLength})`);
  return {
    name: tool.name,
    description: tool.description,
    inputSchema,
    lane: typeof tool.sideEffects === 'function' ? 'by_input' : tool.sideEffects ? 'side_effecting' : 'read_only',
    timeoutMs: tool.timeoutMs,
    heartbeatTimeoutMs: tool.heartbeatTimeoutMs,
    maxAttempts: tool.maxAttempts,
  };
}

function inputJsonSchema(tool: CustomTool): Record<string, unknown> {
  try {
    return z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    // zod names what JSON Schema cannot say in one sentence.
    throw new ToolDefinitionError(`worker tools: "${tool.name}": input: cannot be offered to a model as JSON Schema: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}
