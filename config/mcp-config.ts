import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { McpServerNameSchema } from '../contracts/tools/mcp-tools';
import { ConfigError } from './config-error';

/**
 * The MCP servers of `AGENT_MCP_CONFIG`: a JSON file shaped like the `mcpServers` object
 * of Claude Desktop, Cursor and VS Code, so an existing file works as it is. Its
 * settings are the worker's: `env` and `headers` may hold secrets (as `${VAR}` references
 * to the worker's environment), and nothing of them goes into a workflow, an activity's
 * input or output, or a log line. The client reads the servers' names only, for `--mcp`'s
 * default. Each process reads the file once, in its main, and hands on what it read.
 */

const DEFAULT_TIMEOUT_MS = 60_000;

const common = {
  /** One call's limit, and the limit of connecting and listing. */
  timeoutMs: z.number({ error: 'must be a whole number of milliseconds' }).int({ error: 'must be a whole number of milliseconds' }).min(100).max(86_400_000).default(DEFAULT_TIMEOUT_MS),
  /** Tools of this server in the read-only lane, whatever their `readOnlyHint` says. */
  readOnly: z.array(z.string().min(1)).default([]),
  /** Tools of this server in the side-effecting lane, whatever their `readOnlyHint` says. */
  sideEffecting: z.array(z.string().min(1)).default([]),
};
const stringMap = z.record(z.string(), z.string({ error: 'every value must be a string' }));

const StdioServerSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string({ error: 'required: the program to start' }).min(1, { error: 'must not be empty' }),
  args: z.array(z.string({ error: 'must be strings' })).default([]),
  env: stringMap.default({}),
  cwd: z.string().min(1).optional(),
  ...common,
});
const HttpServerSchema = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  headers: stringMap.default({}),
  ...common,
});

export type McpStdioServer = z.output<typeof StdioServerSchema> & { kind: 'stdio' };
export type McpHttpServer = z.output<typeof HttpServerSchema> & { kind: 'http' };
export type McpServerConfig = McpStdioServer | McpHttpServer;
export type McpConfig = ReadonlyMap<string, McpServerConfig>;

const FileSchema = z.object({ mcpServers: z.record(z.string(), z.unknown(), { error: 'must be an object of servers' }) }, { error: 'must be a JSON object with "mcpServers"' });

/** No file configured: no MCP servers. */
export const NO_MCP_SERVERS: McpConfig = new Map();

/** Reads and checks the file; a mistake is one ConfigError naming the server and the field, never a value. */
export function loadMcpConfig(path: string | undefined, env: Record<string, string | undefined>): McpConfig {
  if (path === undefined) return NO_MCP_SERVERS;
  const servers = new Map<string, McpServerConfig>();
  for (const [name, raw] of Object.entries(readServers(path))) {
    const where = `AGENT_MCP_CONFIG: server "${name}"`;
    const named = McpServerNameSchema.safeParse(name);
    if (!named.success) throw new ConfigError(`${where}: ${named.error.issues[0]?.message ?? 'invalid name'}`);
    const isHttp = typeof raw === 'object' && raw !== null && 'url' in raw;
    const parsed = (isHttp ? HttpServerSchema : StdioServerSchema).safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`${where}: ${issue?.path.join('.') || 'its entry'}: ${issue?.message ?? 'invalid'}`);
    }
    const server = isHttp
      ? { ...(parsed.data as z.output<typeof HttpServerSchema>), kind: 'http' as const }
      : { ...(parsed.data as z.output<typeof StdioServerSchema>), kind: 'stdio' as const };
    if (server.kind === 'http') server.headers = expandAll(server.headers, env, `${where}: headers`);
    else server.env = expandAll(server.env, env, `${where}: env`);
    servers.set(name, server);
  }
  return servers;
}

/** The names alone, for the client's default `--mcp` (every configured server); no value is read. */
export function mcpServerNames(path: string): string[] {
  return Object.keys(readServers(path));
}

function readServers(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split(',')[0];
    throw new ConfigError(`AGENT_MCP_CONFIG: cannot read ${JSON.stringify(path)}: ${reason}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`AGENT_MCP_CONFIG: ${JSON.stringify(path)} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const file = FileSchema.safeParse(json);
  if (!file.success) {
    const issue = file.error.issues[0];
    throw new ConfigError(`AGENT_MCP_CONFIG: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}`);
  }
  return file.data.mcpServers;
}

/** `${VAR}` in a value is the worker's variable VAR; an unset one is a mistake, named but never guessed at. */
function expandAll(values: Record<string, string>, env: Record<string, string | undefined>, where: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, variable: string) => {
        const resolved = env[variable];
        if (resolved === undefined) throw new ConfigError(`${where}.${key}: references \${${variable}}, which is not set in the worker's environment`);
        return resolved;
      }),
    ]),
  );
}
