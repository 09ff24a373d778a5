/**
 * The docs cannot drift from the code: the parts written from it (`npm run docs`) are
 * current, every relative link lands on a file and heading that exist, and the namespace
 * check's example line is the one the worker prints.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { generatedFiles, withGeneratedParts } from '../scripts/docs/generated';
import { createCommand } from '../worker/search-attribute-gaps';
import { docFiles } from './support/doc-blocks';

const ROOT = path.join(import.meta.dirname, '..');

describe('the generated parts of the docs', () => {
  it('are what `npm run docs` writes from the code: the failure table, the CLI reference, the search attributes', async () => {
    for (const { file, current, rendered } of await generatedFiles()) expect(current, `${file} is stale: run npm run docs`).toBe(rendered);
  });

  it('refuse a file that lost a generated part’s markers', () => {
    expect(() => withGeneratedParts('docs/failure-types.md', '# Failure types\n')).toThrow(/no <!-- generated:failure-types --> … <!-- \/generated:failure-types --> markers/);
  });
});

describe('the links of the README and docs/', () => {
  it('land on files and headings that exist', async () => {
    const broken: string[] = [];
    for (const file of await docFiles()) {
      const text = await readFile(path.join(ROOT, file), 'utf8');
      for (const [, target = '', anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const resolved = target === '' ? path.join(ROOT, file) : path.join(ROOT, path.dirname(file), target);
        if (!existsSync(resolved)) broken.push(`${file}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !headingAnchors(await readFile(resolved, 'utf8')).has(anchor)) broken.push(`${file}: ${target}#${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the operations guide', () => {
  it('quotes the namespace check with every search attribute the worker requires', async () => {
    const text = await readFile(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    expect(text).toContain(`register them with \`${createCommand('agents', AGENT_SEARCH_ATTRIBUTES)}\``);
    expect(text).toContain(`lacks the search attributes ${AGENT_SEARCH_ATTRIBUTES.map((k) => k.name).join(', ')};`);
  });
});

/** GitHub's anchors: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6} (.+)$/.exec(line);
    if (heading?.[1]) anchors.add(heading[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replaceAll(' ', '-'));
  }
  return anchors;
}
