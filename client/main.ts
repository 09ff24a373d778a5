import { parseArgs } from 'node:util';
import { parseClientEnv, UsageError } from './config';
import { connectClient, runOnce, uiLink } from './sessions';
import { bold, dim, formatConversation, green, red } from './output';
import { ModelRefSchema } from '../workflows/model-ref';

const USAGE = `usage: npm run client -- <command> [options]

commands:
  run --prompt TEXT [--model provider:model] [--system TEXT] [--id ID] [--keep] [--json]
      start a session, send one prompt, wait for the turn, end the session (unless --keep)

options:
  --verbose   print stack traces
  --help      this text

environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default),
  AGENT_TASK_QUEUE (agent), AGENT_MODEL (anthropic:claude-sonnet-4-5), TEMPORAL_UI_URL (http://localhost:8233)`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      prompt: { type: 'string' },
      model: { type: 'string' },
      system: { type: 'string' },
      id: { type: 'string' },
      keep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const env = parseClientEnv(process.env);
  switch (command) {
    case 'run': {
      if (values.prompt === undefined) throw new UsageError('run needs --prompt TEXT');
      const model = parseModel(values.model ?? env.AGENT_MODEL);
      const client = await connectClient(env);
      try {
        const result = await runOnce(client, env, {
          model,
          prompt: values.prompt,
          keep: values.keep,
          ...(values.json ? {} : { onProgress: (line: string) => console.error(dim(line)) }),
          ...(values.system === undefined ? {} : { system: values.system }),
          ...(values.id === undefined ? {} : { workflowId: values.id }),
        });
        if (values.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
          console.log(formatConversation(result.messages));
          const status = result.status === 'completed' ? green(result.status) : red(result.status);
          const failure = result.failure ? ` ${red(`${result.failure.type}: ${result.failure.message}`)}` : '';
          console.log(`\n${bold('turn')} ${status}${failure}`);
          console.log(dim(`tokens in ${result.usage.inputTokens} · out ${result.usage.outputTokens}`));
          console.log(`${bold('UI')} ${uiLink(env, result.workflowId, result.runId)}`);
        }
      } finally {
        await client.connection.close();
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}" (try --help)`);
  }
}

function parseModel(model: string): string {
  const parsed = ModelRefSchema.safeParse(model);
  if (!parsed.success) throw new UsageError(`bad --model "${model}": ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

const verbose = process.argv.includes('--verbose');
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (verbose) console.error(error);
    else console.error(`client: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
