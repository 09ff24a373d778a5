import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../harness/temporal-binaries';

/**
 * The project's Dockerfile as stages of instructions, for the tests that check the image
 * and rebuild its runtime stage without a Docker engine. It reads the forms the file uses
 * (flags, shell text, a JSON exec form) and nothing more: a line it cannot read throws, so
 * a new kind of instruction is a failing test rather than one the rebuild quietly skips.
 */
export interface Instruction {
  keyword: string;
  /** `--from=dev` → `{ from: 'dev' }`, for COPY and RUN. */
  flags: Record<string, string>;
  /** What follows the keyword and its flags. */
  text: string;
  /** CMD or ENTRYPOINT in exec form (`["node", "x.js"]`). */
  exec?: string[];
}

export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

const KEYWORDS = new Set(['ARG', 'FROM', 'WORKDIR', 'COPY', 'RUN', 'USER', 'ENV', 'CMD', 'ENTRYPOINT']);

export function readDockerfile(file = path.join(PROJECT_ROOT, 'Dockerfile')): Stage[] {
  const lines = readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const instruction = readInstruction(line);
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.text);
      if (!match?.[1]) throw new Error(`Dockerfile: cannot read "${line}"`);
      stages.push({ from: match[1], name: match[2] ?? String(stages.length), instructions: [] });
    } else if (instruction.keyword !== 'ARG' || stages.length > 0) {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile: "${line}" comes before any FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** The stage named `name`; the last one (what `docker build` builds by default) without a name. */
export function dockerStage(stages: readonly Stage[], name?: string): Stage {
  const stage = name === undefined ? stages.at(-1) : stages.find((s) => s.name === name);
  if (!stage) throw new Error(`the Dockerfile has no stage ${name ?? ''}`.trim());
  return stage;
}

/** The stage's instructions of one kind, in order. */
export function instructionsOf(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

function readInstruction(line: string): Instruction {
  const [keyword = '', ...rest] = line.split(/\s+/);
  if (!KEYWORDS.has(keyword)) throw new Error(`Dockerfile: the tests do not know the instruction in "${line}"`);
  const flags: Record<string, string> = {};
  while (rest[0]?.startsWith('--')) {
    const [name = '', value = ''] = (rest.shift() ?? '').slice(2).split(/=(.*)/s);
    flags[name] = value;
  }
  const text = rest.join(' ');
  if ((keyword === 'CMD' || keyword === 'ENTRYPOINT') && text.startsWith('[')) return { keyword, flags, text, exec: JSON.parse(text) as string[] };
  return { keyword, flags, text };
}
