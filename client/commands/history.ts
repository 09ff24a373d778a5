import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../config/config-error';
import { dim } from '../output';
import { exportHistory } from '../sessions';
import { parseCommandArgs, printJson, withClient, type Command } from './command';

export const historyCommand: Command = {
  name: 'history',
  synopsis: 'history <id> --out FILE [--json]',
  summary:
    "Writes the session's Temporal event history (of its current run, when it has continued as new) to FILE as JSON, " +
    'the format Worker.runReplayHistory loads: an incident becomes a replay test in one command.',
  async run(argv, { env }) {
    const { values, positionals } = parseCommandArgs(this, argv, { out: { type: 'string' } }, ['<id>']);
    if (values.out === undefined || values.out === '') throw new ConfigError('history needs --out FILE');
    const [id = ''] = positionals;
    const file = path.resolve(values.out);
    return withClient(env, async (client) => {
      const json = await exportHistory(client, id);
      await writeFile(file, json).catch((error: unknown) => {
        throw new ConfigError(`cannot write ${values.out}: ${error instanceof Error ? error.message : String(error)}`);
      });
      const events = (JSON.parse(json) as { events?: unknown[] }).events?.length ?? 0;
      if (values.json) printJson({ workflowId: id, file, events });
      else {
        console.log(`wrote ${events} events of ${id} to ${values.out}`);
        console.log(dim('replay it: save it in test/fixtures/histories/ and run npx vitest run test/replay.test.ts (README: "Replay a session")'));
      }
      return 0;
    });
  },
};
