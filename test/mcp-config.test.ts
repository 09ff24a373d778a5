import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../config/mcp-config';
import { MCP_ERROR_TYPES } from '../contracts/errors';
import { mcpToolName } from '../contracts/tools/mcp-tools';
import { runEntry } from './support/cli';
import { writeMcpConfig } from './support/mcp/servers';

async function fileWith(text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'mcp-config-')), 'mcp.json');
  await writeFile(file, text);
  return file;
}

describe('AGENT_MCP_CONFIG', () => {
  it('reads stdio and Streamable HTTP servers in the mcpServers shape, with defaults, and expands ${VAR} in env and headers from the worker environment', async () => {
    const file = await writeMcpConfig({
      fs: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'a-${MCP_T1}-b' } },
      web: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${MCP_T2}' }, timeoutMs: 5000, readOnly: ['search'] },
    });
    const config = loadMcpConfig(file, { MCP_T1: 'one', MCP_T2: 'two' });
    expect(config.get('fs')).toMatchObject({ kind: 'stdio', command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'a-one-b' }, timeoutMs: 60_000, readOnly: [], sideEffecting: [] });
    expect(config.get('web')).toMatchObject({ kind: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer two' }, timeoutMs: 5000, readOnly: ['search'] });
    expect(loadMcpConfig(undefined, {}).size).toBe(0);
  });

  it.each([
    ['a server without command or url', { fs: { args: [] } }, 'AGENT_MCP_CONFIG: server "fs": command: required: the program to start'],
    ['a url that is not http', { web: { url: 'ftp://example.com/mcp' } }, 'AGENT_MCP_CONFIG: server "web": url: must be an http:// or https:// URL'],
    ['a timeout that is not a number', { fs: { command: 'x', timeoutMs: 'soon' } }, 'AGENT_MCP_CONFIG: server "fs": timeoutMs: must be a whole number of milliseconds'],
    ['a name that cannot be part of a tool name', { 'my server': { command: 'x' } }, 'AGENT_MCP_CONFIG: server "my server": an MCP server name has 1 to 32 letters, digits, _ or -'],
    ['an unset ${VAR}', { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${MCP_UNSET_VAR}' } } }, 'AGENT_MCP_CONFIG: server "web": headers.Authorization: references ${MCP_UNSET_VAR}, which is not set in the worker\'s environment'],
  ])('refuses %s in one line naming the server and the field', async (_what, servers, line) => {
    const file = await writeMcpConfig(servers);
    expect(() => loadMcpConfig(file, {})).toThrow(line);
  });

  it('refuses a file that is not JSON or has no mcpServers, and one that cannot be read', async () => {
    expect(() => loadMcpConfig(path.join(tmpdir(), 'no-such-mcp-file.json'), {})).toThrow(/^AGENT_MCP_CONFIG: cannot read ".*no-such-mcp-file\.json": ENOENT/);
    const notJson = await fileWith('{ not json');
    expect(() => loadMcpConfig(notJson, {})).toThrow(/^AGENT_MCP_CONFIG: ".*mcp\.json" is not JSON: /);
    const noServers = await fileWith('{"servers": {}}');
    expect(() => loadMcpConfig(noServers, {})).toThrow(/^AGENT_MCP_CONFIG: mcpServers: must be an object of servers$/);
  });

  it('never echoes a value of env or headers in a refusal', async () => {
    const file = await writeMcpConfig({ web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer s3cr3t-value', 'X-Other': 42 } } });
    expect(() => loadMcpConfig(file, {})).toThrow(/^AGENT_MCP_CONFIG: server "web": headers\.X-Other: every value must be a string$/);
    expect(() => loadMcpConfig(file, {})).not.toThrow(/s3cr3t/);
  });

  it('stops npm run worker with one line, before it connects', async () => {
    const file = await writeMcpConfig({ fs: { args: ['/srv'] } });
    const result = await runEntry('worker/main.ts', [], { AGENT_MCP_CONFIG: file, TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('worker: AGENT_MCP_CONFIG: server "fs": command: required: the program to start');
  });
});

describe('MCP failure types', () => {
  it('are each named in the tools docs', async () => {
    const docs = await readFile(path.join(import.meta.dirname, '..', 'docs', 'tools.md'), 'utf8');
    for (const type of Object.values(MCP_ERROR_TYPES)) expect(docs, type).toContain(`\`${type}\``);
  });
});

describe('MCP tool names', () => {
  it('are mcp__<server>__<tool>, with characters providers refuse replaced by _, cut to 64 characters', () => {
    expect(mcpToolName('fs', 'read_text_file')).toBe('mcp__fs__read_text_file');
    expect(mcpToolName('docs', 'search.v2/all')).toBe('mcp__docs__search_v2_all');
    const long = mcpToolName('fs', 'x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).toBe(`mcp__fs__${'x'.repeat(55)}`);
  });
});
