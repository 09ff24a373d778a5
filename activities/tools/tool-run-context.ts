/**
 * What a tool implementation gets from its caller instead of the Temporal Context, so the
 * tool logic runs the same in a unit test as in an activity.
 */
export interface ToolRunContext {
  /** Aborted when the activity is cancelled. A tool stops and throws the signal's reason. */
  signal: AbortSignal;
  /** Progress worth a heartbeat (bytes received, …). */
  onProgress?: (details: Record<string, unknown>) => void;
}
