/**
 * The parts of the docs that are written from the code, never by hand: the failure table
 * from `FAILURE_TYPES`, the CLI reference from the commands and their session flags, and
 * the search-attribute lists from `AGENT_SEARCH_ATTRIBUTES`. Each part sits between
 * `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in its file, so prose around it
 * stays hand-written. `npm run docs` rewrites them; `test/docs-current.test.ts` fails when
 * a file differs from what this renders, so the docs cannot drift from the code.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SearchAttributeType } from '@temporalio/common';
import { COMMANDS } from '../../client/commands/index';
import { SESSION_FLAGS } from '../../client/commands/session-options';
import { FAILURE_TYPES } from '../../contracts/failure-types';
import { AGENT_SEARCH_ATTRIBUTES } from '../../contracts/search-attributes';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';

export interface GeneratedPart {
  /** The file, relative to the project root. */
  file: string;
  name: string;
  render(): string;
}

/** Markdown table cells may not hold a bare `|`. */
const cell = (text: string) => text.replaceAll('|', '\\|');

/** The names Temporal's CLI and Cloud UI give each search-attribute type. */
const TYPE_NAMES: Record<string, string> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export function renderFailureTable(): string {
  const rows = Object.entries(FAILURE_TYPES).map(
    ([type, entry]) => `| \`${type}\` | ${entry.retryable ? 'yes' : 'no'} | ${entry.raisedBy.join(', ')} | ${cell(entry.meaning)} |`,
  );
  return ['| Type | Retried | Raised by | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function renderCommandTable(): string {
  // A summary's first paragraph is the description; `start` and `run` append their options, tabled below.
  const rows = COMMANDS.map((command) => `| \`${cell(command.synopsis)}\` | ${cell((command.summary.split('\n\n')[0] ?? '').replaceAll('\n', ' '))} |`);
  return ['| command | what it does |', '| --- | --- |', ...rows].join('\n');
}

export function renderSessionOptionsTable(): string {
  const rows = Object.values(SESSION_FLAGS).map((flag) => `| \`${cell(flag.usage)}\` | ${cell(flag.help)} |`);
  return ['| option | what it sets (default) |', '| --- | --- |', ...rows].join('\n');
}

export function renderSearchAttributeList(): string {
  return AGENT_SEARCH_ATTRIBUTES.map((key) => `\`${key.name}\` (${TYPE_NAMES[key.type] ?? key.type})`).join(', ');
}

export const GENERATED_PARTS: readonly GeneratedPart[] = [
  { file: 'docs/failure-types.md', name: 'failure-types', render: renderFailureTable },
  { file: 'docs/cli.md', name: 'commands', render: renderCommandTable },
  { file: 'docs/cli.md', name: 'session-options', render: renderSessionOptionsTable },
  { file: 'docs/operations.md', name: 'search-attributes', render: renderSearchAttributeList },
];

const marker = (name: string) => ({ open: `<!-- generated:${name} -->`, close: `<!-- /generated:${name} -->` });

/**
 * The text of `file` with every generated part in it rendered anew. A part whose markers
 * are missing fails: a heading rename must not silently drop a generated table.
 */
export function withGeneratedParts(file: string, text: string): string {
  let out = text;
  for (const part of GENERATED_PARTS.filter((p) => p.file === file)) {
    const { open, close } = marker(part.name);
    const pattern = new RegExp(`${escape(open)}[\\s\\S]*?${escape(close)}`, 'g');
    const count = out.match(pattern)?.length ?? 0;
    if (count === 0) throw new Error(`${file}: no ${open} … ${close} markers for the generated ${part.name}`);
    // A table needs lines of its own; a list inside a sentence does not.
    const rendered = part.render();
    const body = rendered.includes('\n') ? `\n${rendered}\n` : rendered;
    out = out.replace(pattern, () => `${open}${body}${close}`);
  }
  return out;
}

/** The files with generated parts, each with its current and its freshly rendered text. */
export async function generatedFiles(): Promise<{ file: string; current: string; rendered: string }[]> {
  const files = [...new Set(GENERATED_PARTS.map((p) => p.file))];
  return Promise.all(
    files.map(async (file) => {
      const current = await readFile(path.join(PROJECT_ROOT, file), 'utf8');
      return { file, current, rendered: withGeneratedParts(file, current) };
    }),
  );
}

export async function writeGeneratedParts(): Promise<string[]> {
  const changed: string[] = [];
  for (const { file, current, rendered } of await generatedFiles()) {
    if (rendered === current) continue;
    await writeFile(path.join(PROJECT_ROOT, file), rendered);
    changed.push(file);
  }
  return changed;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
