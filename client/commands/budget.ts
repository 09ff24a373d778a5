import { budgetAndSpend, describeBudget, parseBudgetFlags, setBudget } from '../budget';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const budgetCommand: Command = {
  name: 'budget',
  synopsis: 'budget <id> [--usd USD|none] [--tokens N|none] [--warn FRACTION|none] [--json]',
  summary:
    "Shows the session's spend against its budget, or changes the budget live: a number sets a limit, none removes it. " +
    'The next LLM call, also of a running turn, is checked against it; a turn that failed budget_exceeded can be sent again once the budget is raised.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, { usd: { type: 'string' }, tokens: { type: 'string' }, warn: { type: 'string' } }, ['<id>']);
    const [id = ''] = positionals;
    const update = parseBudgetFlags(values);
    return withClient(env, async (client) => {
      const handle = sessionHandle(client, id);
      if (Object.keys(update).length > 0) await patiently(env, setBudget(handle, update));
      const { budget, spend } = await patiently(env, budgetAndSpend(handle));
      if (values.json) printJson({ workflowId: id, budget, spend });
      else console.log(`budget of ${id}: ${describeBudget(budget, spend)}`);
      return 0;
    });
  },
};
