import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The folder boundaries of docs/architecture.md's folder table are lint rules (eslint.config.js):
 * this lints a line of code as if it were in each folder and expects the rule to bite,
 * and the allowed form to pass. Without it, a rule loosened by mistake would go unnoticed
 * until a forbidden import crept in.
 */
const eslint = new ESLint({ cwd: path.join(import.meta.dirname, '..') });

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint keeps each folder to its job', () => {
  it.each([
    ['workflows/turn.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", /Node builtins are not available in the workflow sandbox/],
    ['workflows/turn.ts', "import { createToolRunner } from '../activities/tools';\nexport const run = createToolRunner;\n", /Import activities as types only/],
    ['workflows/turn.ts', "import { connectClient } from '../client/sessions';\nexport const connect = connectClient;\n", /does not run in the workflow sandbox/],
    ['contracts/api.ts', "import type { agentSession } from '../workflows/session';\nexport type Session = typeof agentSession;\n", /must not depend on the session workflow/],
    ['client/sessions.ts', "import { agentSession } from '../workflows/session';\nexport const session = agentSession;\n", /workflows\/ is the session workflow/],
    ['activities/llm/activity.ts', "import { runTurn } from '../../workflows/turn';\nexport const turn = runTurn;\n", /workflows\/ is the session workflow/],
    ['client/sessions.ts', "export const load = () => import('../workflows/session');\n", /workflows\/ is the session workflow/],
    ['encryption/failure-converter.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", /Node builtins are not available in the workflow sandbox/],
  ])('refuses in %s: %s', async (filePath, code, message) => {
    expect((await problems(filePath, code)).join('\n')).toMatch(message);
  }, 60_000);

  it.each([
    ['client/sessions.ts', "import type { agentSession } from '../workflows/session';\nexport type Session = typeof agentSession;\n"],
    ['workflows/turn.ts', "import type { LlmActivities } from '../contracts/llm-call';\nexport type Llm = LlmActivities;\n"],
    ['workflows/turn.ts', "import type { ClientEnv } from '../client/config';\nexport type Env = ClientEnv;\n"],
  ])('allows in %s: %s', async (filePath, code) => {
    expect(await problems(filePath, code)).toEqual([]);
  }, 60_000);
});
