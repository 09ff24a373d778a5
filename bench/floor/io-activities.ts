import { Context } from '@temporalio/activity';
import type { ToolCall } from '../../contracts/messages';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';
import { runPlainStep, runPlainTool, startPlainConversation, type PlainConversation, type PlainLoopDeps } from '../plain-loop';

/**
 * The I/O floor's activities (issue #32 §1): the plain loop's own work (bench/plain-loop.ts),
 * split into activities. `ioFloorLlm` sends the same HTTP request to the same scripted LLM as
 * the agent's LLM activity and reads the streamed reply with the same parser, its conversation
 * kept in this worker's memory; `ioFloorTool` runs a call with the same tool runner. What the
 * agent takes beyond this floor is its orchestration alone: the log, the scheduler, the
 * summaries, the upserts, the checks.
 */
export interface IoFloorActivities {
  /** One step's LLM call: the first sends `text`, a later one the previous step's results; answers the calls the reply asks for. */
  ioFloorLlm(request: { model: string; text: string; results?: ToolOutcome[] }): Promise<ToolCall[]>;
  ioFloorTool(call: ToolCall): Promise<ToolOutcome>;
}

export function createIoFloorActivities(deps: PlainLoopDeps): IoFloorActivities {
  const conversations = new Map<string, PlainConversation>();
  return {
    async ioFloorLlm({ model, text, results }) {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? 'standalone';
      const conversation = conversations.get(workflowId) ?? startPlainConversation(text);
      conversations.set(workflowId, conversation);
      const calls = await runPlainStep(deps, conversation, model, results, Context.current().cancellationSignal);
      // The last step answers without calls: the conversation is over.
      if (calls.length === 0) conversations.delete(workflowId);
      return calls;
    },
    ioFloorTool: (call) => runPlainTool(deps, call, Context.current().cancellationSignal),
  };
}
