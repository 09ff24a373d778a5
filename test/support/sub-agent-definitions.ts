/**
 * The agents test/support/sub-agents-worker.ts serves, for test/sub-agents-process.test.ts.
 * Each has a scripted model of its own (`<provider>:sub-<name>`), so a test scripts one
 * agent's replies without reaching another's:
 *
 * - `planner` (anthropic) is offered `researcher` (anthropic);
 * - `looper` (google) is offered itself: every call of it is a cycle;
 * - `spender` (google): its budget is what its parent has left;
 * - `held-*` (openai): researchers whose replies a test holds while it kills, cancels, times
 *   out or terminates, one per such test, so a reply one test left never reaches another.
 */
import { defineAgent } from '../../contracts/agents/agent-definition';

export const HELD_AGENTS = { parentKill: 'held-parent-kill', childKill: 'held-child-kill', timeout: 'held-timeout', cancel: 'held-cancel', parentClose: 'held-parent-close' } as const;

/** The scripted model an agent runs on, without its provider. */
export const subAgentModel = (name: string) => `sub-${name}`;

export const SUB_AGENTS = [
  defineAgent({ name: 'planner', description: 'Plans, and hands research to the researcher.', model: `anthropic:${subAgentModel('planner')}`, tools: ['calculator'], agents: ['researcher'] }),
  defineAgent({ name: 'researcher', description: 'Finds things out.', model: `anthropic:${subAgentModel('researcher')}`, tools: ['calculator'] }),
  defineAgent({ name: 'looper', description: 'Calls itself.', model: `google:${subAgentModel('looper')}`, tools: [], agents: ['looper'] }),
  defineAgent({ name: 'spender', description: 'Spends tokens.', model: `google:${subAgentModel('spender')}`, tools: ['calculator'] }),
  ...Object.values(HELD_AGENTS).map((name) => defineAgent({ name, description: 'Finds things out, slowly.', model: `openai:${subAgentModel(name)}`, tools: ['calculator'] })),
];
