import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../contracts/version';

describe('the release version', () => {
  it('is package.json\'s, and the CHANGELOG has a section for it', async () => {
    const root = path.join(import.meta.dirname, '..');
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect(await readFile(path.join(root, 'CHANGELOG.md'), 'utf8')).toMatch(new RegExp(`^## ${VERSION.replaceAll('.', '\\.')} — \\d{4}-\\d{2}-\\d{2}$`, 'm'));
  });
});
