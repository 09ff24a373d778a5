import { z } from 'zod';

/**
 * What a tool activity returns. `error` is an ordinary result the model reads (a 404, a
 * missing file, a division by zero); it never fails the step. Infrastructure failures are
 * thrown by the activity instead and never appear here.
 */
export const ToolOutcomeSchema = z.object({
  code: z.enum(['ok', 'error']),
  content: z.string(),
});
export type ToolOutcome = z.infer<typeof ToolOutcomeSchema>;

/** The single tool activity's argument. */
export const RunToolRequestSchema = z.object({
  name: z.string().min(1),
  /** Already validated by the workflow; the activity validates it again with the same schema. */
  input: z.unknown(),
  callId: z.string().min(1),
  /** Required for side-effecting calls; see `idempotencyKey`. */
  idempotencyKey: z.string().min(1).optional(),
});
export type RunToolRequest = z.infer<typeof RunToolRequestSchema>;

/** The activity's signature, for `proxyActivities<ToolActivities>` in the workflow. */
export interface ToolActivities {
  runTool(request: RunToolRequest): Promise<ToolOutcome>;
}
