import { SendMessageSchema, stateQuery } from '../../contracts/api';
import { parseModelRef } from '../../contracts/model-ref';
import { outputSchemaNotes } from '../../contracts/output-compat';
import { ConfigError } from '../../config/config-error';
import { dim, yellow } from '../output';
import { readOutputSchemaFile } from '../output-schema-file';
import { readSessionLog } from '../log-chain';
import { sendMessage, turnMessages } from '../turn-control';
import { watchSession } from '../watch';
import { parseCommandArgs, patiently, printJson, sessionHandle, withClient, type Command } from './command';
import { humanWatchPrinter } from './watch';

export const sendCommand: Command = {
  name: 'send',
  followsLive: true,
  synopsis: 'send <id> TEXT [--output-schema FILE] [--wait] [--json]',
  summary:
    'Sends a user message; the session runs it as a turn (queued behind a running one). Without --wait it returns once the session has accepted the message. ' +
    'With --wait it follows the turn live and prints the reply; a failed or cancelled turn is reported with its failure type, exit code 0. ' +
    "--output-schema FILE: this turn's answer must match the JSON Schema in FILE, in place of the session's (see start); --json then adds output, the answer's value.",
  async run(argv, { env, signal }) {
    const { values, positionals } = parseCommandArgs(this, argv, { wait: { type: 'boolean', default: false }, 'output-schema': { type: 'string' } }, ['<id>', 'TEXT']);
    const [id = '', text = ''] = positionals;
    // Checked before connecting: a command-line mistake should not wait for a network error.
    const message = SendMessageSchema.safeParse({ text });
    if (!message.success) throw new ConfigError(message.error.issues[0]?.message ?? 'invalid message');
    const file = values['output-schema'];
    const outputSchema = file === undefined ? undefined : readOutputSchemaFile('--output-schema', file);
    const options = outputSchema ? { outputSchema } : {};
    return withClient(env, async (client) => {
      const handle = sessionHandle(client, id);
      // Read before sending: with --wait only what this message causes is shown, the log from its end on.
      const state = values.wait || outputSchema ? await patiently(env, handle.query(stateQuery)) : undefined;
      // As start says for a session's schema: what the session's provider does with this one.
      if (outputSchema && state) for (const line of outputSchemaNotes(parseModelRef(state.model).provider, outputSchema)) console.error(yellow(line));
      if (!values.wait || !state) {
        const sent = await patiently(env, sendMessage(handle, text, options));
        if (values.json) printJson({ workflowId: id, updateId: sent.updateId });
        else console.log(`sent to ${id}; follow it with: npm run client -- watch ${id}`);
        return 0;
      }
      const fromSeq = state.events;
      const sent = await patiently(env, sendMessage(handle, text, options));
      const ended = await watchSession(client, handle, {
        until: sent.outcome,
        fromSeq,
        signal,
        onItem: values.json ? () => undefined : humanWatchPrinter(id),
      });
      if (ended === 'interrupted') return 130;
      if (ended === 'closed') throw new Error(`session ${id} closed before the turn ended`);
      const outcome = await sent.outcome;
      if (values.json) {
        // The log from before this message on: the turn is in it, and a long session's earlier runs are not read.
        const events = await readSessionLog(client.workflow, id, { fromSeq });
        printJson({
          workflowId: id,
          turn: outcome.turn,
          status: outcome.status,
          ...(outcome.failure ? { failure: outcome.failure } : {}),
          ...(outcome.output === undefined ? {} : { output: outcome.output }),
          messages: outcome.turn === undefined ? [] : turnMessages(events, outcome.turn),
        });
      } else if (outcome.reason === 'handoff' && outcome.handedOffTo) {
        // The log's `handed over to` line came with the events; the conversation goes on there.
        const to = outcome.handedOffTo;
        console.error(yellow(`handed over to ${to.agent}: session ${to.workflowId}`));
        console.error(dim(`follow it with: npm run client -- watch ${to.workflowId}`));
      } else {
        // The turn's last line (`turn 2 completed`, or its failure) came with the log events.
        console.error(dim(`the whole log: npm run client -- log ${id}`));
      }
      return 0;
    });
  },
};
