import type { AssistantMessage, ToolResultCode } from '../contracts/messages';
import type { SessionEvent } from '../contracts/session-log';

/**
 * Results for the tool calls a failed step left unanswered. Every tool call of a committed
 * assistant message must have exactly one result before its step closes, or the next
 * request is one that every provider rejects: a call recorded as dispatched but without a
 * result gets TOOL_OUTCOME_UNKNOWN (it may have run, side effects included), a call
 * that was never started gets TOOL_NOT_STARTED, and a recorded result is never replaced.
 *
 * One implementation serves both the live step driver, which compensates before it closes
 * a failed step, and crash-tail repair, which closes a log whose step never ended. Both
 * feed it the committed events of the step and read back the missing results.
 */

export interface CompensationResult {
  callId: string;
  name: string;
  code: Extract<ToolResultCode, 'TOOL_OUTCOME_UNKNOWN' | 'TOOL_NOT_STARTED'>;
  content: string;
}

export function outcomeUnknownText(name: string, callId: string): string {
  return (
    `TOOL_OUTCOME_UNKNOWN: the call ${callId} to "${name}" was dispatched, but the step failed before its result ` +
    'was recorded. It may or may not have run, and it may have had side effects. Do not blindly retry it: ' +
    'first check whether its effect already happened, or ask the user.'
  );
}

export function notStartedText(name: string, callId: string): string {
  return (
    `TOOL_NOT_STARTED: the call ${callId} to "${name}" was never dispatched because the step failed first. ` +
    'It had no effect. Request it again if it is still needed.'
  );
}

/**
 * Tracks which calls of one committed assistant message were recorded and answered.
 * It keeps call identities only, never a copy of the session history.
 */
export class PendingCallTracker {
  readonly #calls: AssistantMessage['toolCalls'];
  readonly #recorded = new Set<string>();
  readonly #answered = new Set<string>();

  constructor(message: AssistantMessage) {
    this.#calls = message.toolCalls;
  }

  observe(event: SessionEvent): void {
    if (event.type === 'tool/call') this.#recorded.add(event.callId);
    else if (event.type === 'tool/result') this.#answered.add(event.callId);
  }

  /**
   * In the assistant's call order: a recorded call without a result may have run, so its
   * outcome is unknown; a call never recorded never started. Answered calls are left
   * exactly as they are.
   */
  compensationResults(): CompensationResult[] {
    const results: CompensationResult[] = [];
    for (const { id, name } of this.#calls) {
      if (this.#answered.has(id)) continue;
      results.push(
        this.#recorded.has(id)
          ? { callId: id, name, code: 'TOOL_OUTCOME_UNKNOWN', content: outcomeUnknownText(name, id) }
          : { callId: id, name, code: 'TOOL_NOT_STARTED', content: notStartedText(name, id) },
      );
    }
    return results;
  }
}
