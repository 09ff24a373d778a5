import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTimeoutType } from '@temporalio/common';
import { lastFailureType } from '../client/progress';
import { MCP_ERROR_TYPES, NON_RETRYABLE_LLM_ERROR_TYPES, RETRYABLE_LLM_ERROR_TYPES, TIMEOUT_ERROR_TYPES, TOOL_ERROR_TYPES, WORKFLOW_ERROR_TYPES } from '../contracts/errors';
import { FAILURE_TYPES, isFailureType } from '../contracts/failure-types';

const root = path.join(import.meta.dirname, '..');
const SOURCE_FOLDERS = ['activities', 'contracts', 'encryption', 'workflows', 'worker', 'client', 'config', 'connection'];
const GROUPS: Record<string, Record<string, string>> = { WORKFLOW_ERROR_TYPES, MCP_ERROR_TYPES, TIMEOUT_ERROR_TYPES, TOOL_ERROR_TYPES };

/**
 * Places that raise a type they received rather than name one, each with why the type is
 * already in the catalogue. A site that is neither a literal, a catalogue group, nor listed
 * here fails the test; so does an entry here that no longer matches any site.
 */
const PASS_THROUGH: Record<string, string> = {
  'activities/llm/activity-failure.ts: error.type': 'an LlmError, whose type is an LlmErrorType',
  'workflows/failure.ts: inner.type': "the activity failure's cause, summarized by the same function",
  'workflows/failure.ts: type': 'checked with isFailureType, or read from TIMEOUT_ERROR_TYPES',
  'workflows/tools/mcp-session.ts: type': 'the result of summarizeFailure',
  'workflows/session-handlers.ts: outcome.failure?.type ?? WORKFLOW_ERROR_TYPES.internal': "a turn's failure, the result of summarizeFailure",
  'activities/llm/classify.ts: type': 'an LlmErrorType, from typeForStatus',
};

interface Site {
  file: string;
  expression: string;
}

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** The text between the parenthesis at `open` and the one that closes it. */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error('unbalanced call');
}

/** The `type` a call's options object names: `type: X`, the shorthand `type`, or none. */
function typeExpressionOf(args: string): string | undefined {
  const named = /(?:^|[{,]\s*)type:\s*([^,}\n]+?)\s*(?:,|\}|\n)/.exec(args);
  if (named) return named[1];
  return /[{,]\s*type\s*[,}]/.test(args) ? 'type' : undefined;
}

/** Every place the code raises a failure or builds a failure summary, with the expression that gives its type. */
async function failureSites(): Promise<Site[]> {
  const sites: Site[] = [];
  for (const folder of SOURCE_FOLDERS) {
    for (const file of await sourceFiles(folder)) {
      const text = await readFile(path.join(root, file), 'utf8');
      for (const call of text.matchAll(/(?:ApplicationFailure\.(?:create|nonRetryable|retryable)|new LlmError)\(/g)) {
        const args = argumentsAt(text, call.index + call[0].length - 1);
        sites.push({ file, expression: typeExpressionOf(args) ?? `<no type> ${call[0]}${args.slice(0, 60)}` });
      }
      for (const summary of text.matchAll(/\{\s*type(?::\s*([^,{}]+?))?,\s*message\b/g)) {
        const expression = summary[1] ?? 'type';
        // A failure summary ({ type, message }) is built where the session's log is written; the client's items of that shape are not failures.
        if (!expression.startsWith('z.') && !file.startsWith('client/')) sites.push({ file, expression });
      }
      for (const annotated of text.matchAll(/:\s*(?:LlmErrorType|FailureType)\s*=\s*('[^']*')/g)) sites.push({ file, expression: annotated[1] as string });
    }
  }
  return sites;
}

/** The type a site's expression names, or undefined when it names none the test can read. */
function resolve(site: Site, text: string): string | undefined {
  const literal = /^'([^']*)'$/.exec(site.expression);
  if (literal) return literal[1];
  const choice = /^[\w.]+ \? '([^']*)' : '([^']*)'$/.exec(site.expression);
  if (choice) return [choice[1], choice[2]].find((type) => !isFailureType(type as string)) ?? choice[1];
  const member = /^(\w+)\.(\w+)$/.exec(site.expression);
  if (member && GROUPS[member[1] as string]) return GROUPS[member[1] as string]?.[member[2] as string] ?? `<no ${site.expression}>`;
  const constant = /^[A-Z_]+$/.test(site.expression) ? new RegExp(`const ${site.expression}(?::[^=]+)?\\s*=\\s*'([^']*)'`).exec(text) : null;
  return constant?.[1];
}

describe('the failure catalogue', () => {
  it('is the docs table, row for row, both ways', async () => {
    const section = await readFile(path.join(root, 'docs', 'failure-types.md'), 'utf8');
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |`| \|$/g, '')));
    const table = Object.fromEntries(rows.map(([type, retried, raisedBy, meaning]) => [type, { retried, raisedBy, meaning }]));
    const catalogue = Object.fromEntries(
      Object.entries(FAILURE_TYPES).map(([type, e]) => [type, { retried: e.retryable ? 'yes' : 'no', raisedBy: e.raisedBy.join(', '), meaning: e.meaning }]),
    );
    expect(rows).toHaveLength(Object.keys(FAILURE_TYPES).length);
    expect(table).toEqual(catalogue);
  });

  it('holds every type the named groups give, with the retry behaviour the LLM ladder assumes', () => {
    for (const type of RETRYABLE_LLM_ERROR_TYPES) expect(FAILURE_TYPES[type].retryable, type).toBe(true);
    for (const type of NON_RETRYABLE_LLM_ERROR_TYPES) expect(FAILURE_TYPES[type].retryable, type).toBe(false);
    const llmOnly = Object.entries(FAILURE_TYPES).filter(([, e]) => e.raisedBy.length === 1 && e.raisedBy[0] === 'llm activity');
    expect(llmOnly.map(([type]) => type).sort()).toEqual([...RETRYABLE_LLM_ERROR_TYPES, ...NON_RETRYABLE_LLM_ERROR_TYPES].sort());
    const mcp = Object.entries(FAILURE_TYPES).filter(([, e]) => (e.raisedBy as readonly string[]).includes('mcp activity'));
    expect(mcp.map(([type]) => type).sort()).toEqual(Object.values(MCP_ERROR_TYPES).sort());
    for (const group of Object.values(GROUPS)) for (const type of Object.values(group)) expect(isFailureType(type), type).toBe(true);
  });

  it('names every type the code raises or reports', async () => {
    const sites = await failureSites();
    const texts = new Map<string, string>();
    const outside: string[] = [];
    const passedThrough = new Set<string>();
    for (const site of sites) {
      if (!texts.has(site.file)) texts.set(site.file, await readFile(path.join(root, site.file), 'utf8'));
      const key = `${site.file}: ${site.expression}`;
      if (PASS_THROUGH[key]) {
        passedThrough.add(key);
        continue;
      }
      const type = resolve(site, texts.get(site.file) as string);
      if (type === undefined || !isFailureType(type)) outside.push(`${key}${type === undefined ? '' : ` (${type})`}`);
    }
    expect(outside).toEqual([]);
    expect([...passedThrough].sort()).toEqual(Object.keys(PASS_THROUGH).sort());
    // The scan found the raising code at all: the LLM, tool and MCP activities and the session.
    for (const file of ['activities/llm/activity-failure.ts', 'activities/tools/tool-activities.ts', 'activities/mcp/mcp-failure.ts', 'workflows/session.ts', 'workflows/repair.ts']) {
      expect(sites.some((s) => s.file === file), file).toBe(true);
    }
  });
});

describe("a pending activity's last failure, as the client prints it", () => {
  it('is the type the activity raised, or the kind of timeout, never the provider 408 type', () => {
    expect(lastFailureType({ applicationFailureInfo: { type: 'rate_limit' } })).toBe('rate_limit');
    expect(lastFailureType({ timeoutFailureInfo: { timeoutType: encodeTimeoutType('HEARTBEAT') } })).toBe('heartbeat_timeout');
    expect(lastFailureType({ timeoutFailureInfo: { timeoutType: encodeTimeoutType('START_TO_CLOSE') } })).toBe('start_to_close_timeout');
    expect(lastFailureType({ message: 'the server gave no kind' })).toBe('internal_error');
  });
});
