import type { ScriptedLlm, ScriptedReply } from '../testing/scripted-llm/server';

/** Three read-only calls per step, the same in every loop the benchmark compares. */
const TOOL_STEP: ScriptedReply = {
  kind: 'tool_calls',
  calls: [
    { name: 'calculator', input: { expression: '6*7' } },
    { name: 'calculator', input: { expression: '2^10' } },
    { name: 'calculator', input: { expression: 'sqrt(16)' } },
  ],
};

let models = 0;

/** A model name no other turn uses, so each turn's requests can be told apart in the LLM's log. */
export function uniqueModel(label: string): string {
  return `bench-${label}-${++models}-${process.pid}`;
}

/**
 * Scripts a turn of `steps` steps: `steps - 1` replies that ask for three calculator calls,
 * then a final text. Every reply comes at once: the benchmark measures the loop, not a model.
 */
export function scriptTurn(llm: ScriptedLlm, model: string, steps: number): void {
  if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`a turn has at least one step, got ${steps}`);
  const replies: ScriptedReply[] = Array.from({ length: steps - 1 }, () => TOOL_STEP);
  replies.push({ kind: 'text', text: 'The answers are 42, 1024 and 4.' });
  llm.script(model, ...replies);
}

/** When each of the model's requests reached the scripted LLM (epoch ms): the step start times. */
export function llmStepStarts(llm: ScriptedLlm, model: string): number[] {
  return llm.requests({ model }).map((r) => r.at);
}
