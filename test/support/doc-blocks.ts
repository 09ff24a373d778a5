/**
 * The shell blocks of the README and docs/, read the way `test/docs-commands.test.ts` runs
 * them. A block is what a person is told to type; how the test treats it is said in the
 * text just above it, where the reader sees it too:
 * - no mark: the test runs it, command by command, against `npm start`'s embedded servers;
 * - `*Not run here: WHY.*`: it cannot run on this machine (Temporal Cloud, a real key, a
 *   Docker engine); its variable names are still checked against the configuration;
 * - `*Run by test/NAME.test.ts…*`: another test runs that flow (it needs a setup of its own).
 *
 * Inside a block, a line `#   TEXT` after a command is output the command promises: the
 * test looks for it in what the command printed, `…` standing for any text. `<id>` is the
 * session id that an earlier command of the same file printed.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export type BlockMark = { kind: 'run' } | { kind: 'not-run'; why: string } | { kind: 'run-by'; test: string };

export interface DocCommand {
  /** The command line as written (a trailing `# comment` removed). */
  line: string;
  /** The `#   …` lines after it: what it must print. */
  promises: string[];
}

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  mark: BlockMark;
  commands: DocCommand[];
  /** The block's text, as written. */
  text: string;
}

const ROOT = path.join(import.meta.dirname, '..', '..');

/** The Markdown files a user reads: the README, docs/, the benchmark's and the contributors' pages. */
export async function docFiles(): Promise<string[]> {
  const docs = (await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs.sort(), 'bench/README.md', 'CONTRIBUTING.md'];
}

export async function readDocBlocks(file: string): Promise<DocBlock[]> {
  return parseDocBlocks(file, await readFile(path.join(ROOT, file), 'utf8'));
}

export function parseDocBlocks(file: string, text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(sh|bash|shell|console)\s*$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) body.push(lines[i] ?? '');
    blocks.push({ file, line: start + 1, mark: markAbove(lines, start), commands: commandsOf(body), text: body.join('\n') });
  }
  return blocks;
}

/** The mark is the last non-empty line above the fence, when it is one of the two forms. */
function markAbove(lines: readonly string[], fence: number): BlockMark {
  let j = fence - 1;
  while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
  const above = (lines[j] ?? '').trim();
  const notRun = /^\*Not run here: (.+)\*$/.exec(above);
  if (notRun?.[1]) return { kind: 'not-run', why: notRun[1] };
  const runBy = /^\*Run by `?(test\/[\w./-]+\.test\.ts)`?.*\*$/.exec(above);
  if (runBy?.[1]) return { kind: 'run-by', test: runBy[1] };
  return { kind: 'run' };
}

function commandsOf(body: readonly string[]): DocCommand[] {
  const commands: DocCommand[] = [];
  for (const raw of body) {
    const promise = /^#\s{3}(.*)$/.exec(raw);
    if (promise?.[1] !== undefined) {
      commands.at(-1)?.promises.push(promise[1]);
      continue;
    }
    if (raw.trim() === '' || raw.trim().startsWith('#')) continue;
    commands.push({ line: withoutComment(raw).trim(), promises: [] });
  }
  return commands;
}

/** `cmd --x "a # b"   # note` → `cmd --x "a # b"`: a `#` outside quotes after a space starts a comment. */
export function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) return line.slice(0, i).trimEnd();
  }
  return line;
}

/** A promised line as a pattern: `…` is any text, everything else literal. */
export function promisePattern(promise: string): RegExp {
  const parts = promise.trim().split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('.*'));
}

/** `FOO=1 BAR=2 cmd`, `export FOO=…`: the variable names a block sets. */
export function variablesSet(block: DocBlock): string[] {
  const names = new Set<string>();
  for (const command of block.commands) {
    const exported = /^export\s+([A-Z][A-Z0-9_]*)=/.exec(command.line);
    if (exported?.[1]) names.add(exported[1]);
    for (const prefix of command.line.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=\S*(?=\s)/g)) if (prefix[1]) names.add(prefix[1]);
  }
  return [...names];
}

/**
 * The blocks whose mark names `test` (`test/NAME.test.ts`) as the test that runs them. That
 * test takes each of their commands with `DocLines` and runs it, so a command changed in
 * the text is a command changed in the test.
 */
export async function blocksRunBy(test: string): Promise<DocBlock[]> {
  const blocks = (await Promise.all((await docFiles()).map(readDocBlocks))).flat();
  return blocks.filter((block) => block.mark.kind === 'run-by' && block.mark.test === test);
}

/** A command line split as sh splits it: leading `NAME=value` assignments, then the words (quotes kept together, no expansions). */
export interface ShellWords {
  env: Record<string, string>;
  argv: string[];
}

export function shellWords(line: string): ShellWords {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const c of line) {
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${line}`);
  if (word !== undefined) words.push(word);
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Z][A-Z0-9_]*=/.test(words[0])) {
    const [name = '', ...value] = (words.shift() ?? '').split('=');
    env[name] = value.join('=');
  }
  return { env, argv: words };
}

/**
 * The commands of the blocks a test runs, taken one by one: `take` finds the command a
 * step of the test runs, and `untaken` is what the test left out, which it asserts empty,
 * so a command added to the text fails the test until the test runs it too.
 */
export class DocLines {
  readonly #left: string[];

  constructor(blocks: readonly DocBlock[]) {
    this.#left = blocks.flatMap((block) => block.commands.map((command) => command.line));
    if (this.#left.length === 0) throw new Error('no documented commands to run: is the block still marked “Run by” this test?');
  }

  /** The one documented command that matches, split into its words; it is then taken. */
  take(pattern: RegExp): ShellWords {
    const index = this.#left.findIndex((line) => pattern.test(line));
    if (index < 0) throw new Error(`no documented command matches ${pattern}; left: ${this.#left.join(' | ')}`);
    const [line = ''] = this.#left.splice(index, 1);
    return shellWords(line);
  }

  untaken(): readonly string[] {
    return this.#left;
  }
}
