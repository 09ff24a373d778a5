import { ConfigError } from '../../config/config-error';
import { describeRetryPolicy, parseRetryPolicyArg, setRetryPolicy } from '../retry-policy';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';

export const retryPolicyCommand: Command = {
  name: 'retry-policy',
  synopsis: "retry-policy <id> off|default|'<json>' [--json]",
  summary:
    "Changes the session's LLM retry policy live, also for a call retrying right now: off (one attempt), default (11 attempts, 1 s doubling to 30 s, 240 s budget), " +
    'or JSON naming the fields to change, e.g. \'{"maxRetries":3,"maxDelayMs":5000}\' (fields: maxRetries, baseDelayMs, maxDelayMs, budgetMs, maxServerWaitMs).',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, {}, ['<id>', 'off|default|<json>']);
    const [id = '', text = ''] = positionals;
    if (text === '') throw new ConfigError('retry-policy needs off, default or a JSON object');
    const policy = parseRetryPolicyArg(text);
    return withClient(env, async (client) => {
      const live = await patiently(env, setRetryPolicy(sessionHandle(client, id), policy));
      if (values.json) printJson({ workflowId: id, retryPolicy: live });
      else console.log(`retry policy of ${id}: ${describeRetryPolicy(live)}`);
      return 0;
    });
  },
};
