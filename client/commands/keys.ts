import { ConfigError } from '../../config/config-error';
import { bold, dim } from '../output';
import { parseCommandArgs, parseList, parseWholeNumber, printJson, type Command } from './command';

export const keysCommand: Command = {
  name: 'keys',
  synopsis: "keys new --id NAME --agents A,B|'*' [--approve] [--rpm N] --file FILE [--json]",
  summary:
    "Makes a gateway key (docs/gateway.md) and adds it to the keys file FILE (AGENT_GATEWAY_KEYS_FILE; created owner-only when absent): it may start the agents listed, or all of them and sessions from settings with '*', " +
    'and approve or deny waiting calls with --approve; --rpm sets its requests per minute (600). The secret is printed once and only its SHA-256 is stored: keep it, it cannot be shown again. ' +
    '--json prints {id, secret, file}.',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      this,
      argv,
      { id: { type: 'string' }, agents: { type: 'string' }, approve: { type: 'boolean', default: false }, rpm: { type: 'string' }, file: { type: 'string' } },
      ['new'],
    );
    if (positionals[0] !== 'new') throw new ConfigError(`keys: unknown action "${positionals[0]}" (usage: ${this.synopsis})`);
    const missing = (['id', 'agents', 'file'] as const).filter((name) => values[name] === undefined);
    if (missing.length > 0) throw new ConfigError(`keys new needs ${missing.map((name) => `--${name}`).join(' and ')} (usage: ${this.synopsis})`);
    const agents = values.agents?.trim() === '*' ? '*' : parseList('--agents', values.agents ?? '');
    const file = values.file ?? '';
    // Loaded only here, as serve loads the gateway: no other command needs it.
    const { addKeyToFile, newGatewayKey } = await import('../../gateway/keys');
    const { secret, entry } = newGatewayKey({
      id: values.id ?? '',
      agents,
      approve: values.approve,
      ...(values.rpm === undefined ? {} : { requestsPerMinute: parseWholeNumber('--rpm', values.rpm, 1, 1_000_000) }),
    });
    addKeyToFile(file, entry);
    if (values.json) {
      printJson({ id: entry.id, secret, file });
      return 0;
    }
    const rights = `${entry.agents === '*' ? "every agent, and sessions from settings" : `agents ${entry.agents.join(', ')}`}${entry.approve ? ', may approve' : ''}`;
    console.log(`added key ${bold(entry.id)} (${rights}) to ${file}`);
    console.log(dim("its secret, shown only now (the file keeps its SHA-256): send it as Authorization: Bearer <secret>"));
    console.log(secret);
    return 0;
  },
};
