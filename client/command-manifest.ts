import { existsSync, readFileSync } from 'node:fs';
import type { Command } from './commands/command';

/** What help prints of a command: all the usage text needs, without loading the command. */
export type CommandSummary = Pick<Command, 'name' | 'synopsis' | 'summary'>;

/**
 * Where `npm run build` writes every command's summary, beside the compiled client.
 * Loading the commands means loading `@temporalio/client` and zod (most of a second's
 * worth of a CLI start on a small machine); `--help` reads this file instead. In the
 * sources there is none, and help loads the commands.
 */
export const COMMAND_MANIFEST = new URL('./commands.manifest.json', import.meta.url);

export function readCommandManifest(): CommandSummary[] | undefined {
  if (!existsSync(COMMAND_MANIFEST)) return undefined;
  const parsed: unknown = JSON.parse(readFileSync(COMMAND_MANIFEST, 'utf8'));
  return Array.isArray(parsed) && parsed.every(isSummary) ? parsed : undefined;
}

export function commandSummaries(commands: readonly CommandSummary[]): CommandSummary[] {
  return commands.map(({ name, synopsis, summary }) => ({ name, synopsis, summary }));
}

function isSummary(value: unknown): value is CommandSummary {
  const v = value as Partial<CommandSummary> | null;
  return typeof v?.name === 'string' && typeof v.synopsis === 'string' && typeof v.summary === 'string';
}
