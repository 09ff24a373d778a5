import type { Sinks } from '@temporalio/workflow';
import type { LlmSettings } from './llm-call';
import type { SessionEvent } from './session-log';

/**
 * The sink through which a session mirrors its log into its worker's memory: the workflow
 * calls it (workflows/log-sink.ts) and the worker's log cache answers it
 * (activities/llm/session-log-cache.ts). Both sides name it here, so neither imports the
 * other.
 */
export interface SessionLogSinks extends Sinks {
  sessionLog: {
    /** A run starts: its settings and the events it starts with (carried, forked, repaired). */
    opened(settings: LlmSettings, events: readonly SessionEvent[]): void;
    /** Events appended since the last call, in order. */
    appended(events: readonly SessionEvent[]): void;
    /** The run has ended or continued as new: nothing will read its copy again. */
    closed(): void;
  };
}
