import { bold, dim, formatConversation, formatOutput, formatSpend, green, red, yellow } from '../output';
import { runOnce, uiLink } from '../sessions';
import { ConfigError } from '../../config/config-error';
import { parseCommandArgs, printJson, withClient, type Command } from './command';
import { SESSION_OPTIONS, SESSION_OPTIONS_HELP, SESSION_SYNOPSIS, sessionOptionsFrom } from './session-options';

export const runCommand: Command = {
  name: 'run',
  synopsis: `run --prompt TEXT ${SESSION_SYNOPSIS} [--keep] [--json]`,
  summary:
    'Starts a session, sends one prompt, waits for the turn (showing progress on stderr) and ends the session unless --keep. ' +
    '--json prints {workflowId, runId, status, reason?, failure?, output?, messages, stopReason?, usage (tokens and costUsd, null when a model has no price), settings}; a failed turn is status "failed" with its failure type, exit code 0; ' +
    'with an output schema (--output-schema, the agent\'s output) output is the answer\'s JSON value, which the human output prints indented; ' +
    'a turn that reached --max-steps is status "completed" with reason "step_limit"; settings are the ones the session ran with, defaults filled in.\n\n' +
    SESSION_OPTIONS_HELP,
  async run(argv, { env }) {
    const { values } = parseCommandArgs(this, argv, { ...SESSION_OPTIONS, prompt: { type: 'string' }, keep: { type: 'boolean', default: false } }, []);
    if (values.prompt === undefined) throw new ConfigError('run needs --prompt TEXT');
    const options = sessionOptionsFrom(values, env);
    return withClient(env, async (client) => {
      const result = await runOnce(client, env, {
        ...options,
        prompt: values.prompt ?? '',
        keep: values.keep,
        onNotice: (line: string) => console.error(yellow(line)),
        ...(values.json ? {} : { onProgress: (line: string) => console.error(dim(line)) }),
      });
      if (values.json) {
        printJson(result);
        return 0;
      }
      if (result.handedOffTo) console.error(yellow(`handed over to ${result.handedOffTo.agent}: session ${result.handedOffTo.workflowId}`));
      console.log(formatConversation(result.messages));
      if (result.output !== undefined) console.log(`\n${bold('output')}\n${formatOutput(result.output)}`);
      if (result.stopReason === 'refusal') console.log(red('the model refused to answer'));
      const status = result.status === 'completed' ? green(result.status) : red(result.status);
      const failure = result.failure ? ` ${red(`${result.failure.type}: ${result.failure.message}`)}` : '';
      const limit = result.reason === 'step_limit' ? ` ${red(`at the step limit of ${result.settings.maxSteps} steps (--max-steps)`)}` : '';
      console.log(`\n${bold('turn')} ${status}${limit}${failure}`);
      console.log(dim(formatSpend(result.usage)));
      console.log(`${bold('UI')} ${uiLink(env, result.workflowId, result.runId)}`);
      return 0;
    });
  },
};
