import { Agent } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server';

/**
 * For tests that call the LLM activity directly: a scripted LLM for the file, started in
 * `beforeAll`, and the undici dispatcher the activity sends through, both closed after.
 */
export function useScriptedLlmEndpoint(): { llm: () => ScriptedLlm; dispatcher: Agent } {
  let llm: ScriptedLlm | undefined;
  const dispatcher = new Agent();
  beforeAll(async () => {
    llm = await startScriptedLlm();
  });
  afterAll(async () => {
    await llm?.close();
    await dispatcher.close();
  });
  return {
    llm: () => {
      if (!llm) throw new Error('the scripted LLM starts in beforeAll');
      return llm;
    },
    dispatcher,
  };
}
