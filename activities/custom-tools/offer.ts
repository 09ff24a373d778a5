import { z } from 'zod';
import type { CustomTool } from '../../contracts/tools/custom-tool';
import type { CustomToolOffer } from '../../contracts/tools/custom-tool-offer';

/**
 * What a session records of a tool: its name, description, lane rule and limits, and its
 * input's JSON Schema as the model writes it (the input side of the zod schema). `$schema`
 * is left out: noise to providers, and Gemini refuses unknown keywords.
 */
export function offerOf(tool: CustomTool): CustomToolOffer {
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
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
