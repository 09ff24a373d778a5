import { ApplicationFailure } from '@temporalio/activity';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCP_ERROR_TYPES } from '../../contracts/errors';
import type { McpServerConfig } from '../../config/mcp-config';
import { redactSecrets } from '../llm/llm-error';

/**
 * How a failure names its server: the command, or the URL without its query (which may
 * carry a key); never `args`, `env` or `headers`, which may hold secrets.
 */
export function describeServer(name: string, server: McpServerConfig): string {
  if (server.kind === 'stdio') return `MCP server "${name}" (${server.command})`;
  const url = new URL(server.url);
  return `MCP server "${name}" (${url.origin}${url.pathname})`;
}

/** An error a server answered with: the call reached it, so it is a result for the model, not a broken connection. */
export function isServerAnswer(error: unknown): error is McpError {
  return error instanceof McpError && error.code !== ErrorCode.ConnectionClosed && error.code !== ErrorCode.RequestTimeout;
}

/**
 * A failure to reach a server, or its silence past `timeoutMs`, as a typed failure: an
 * infrastructure failure of the call (or of the listing) that the workflow's lanes decide
 * about. `clue` is what the server last said on stderr or could not say on stdout.
 */
export function mcpFailure(name: string, server: McpServerConfig, error: unknown, clue: string, doing: 'connect' | 'list' | 'call'): ApplicationFailure {
  const who = describeServer(name, server);
  const said = clue ? `; it said: ${redact(server, clue)}` : '';
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    const what = doing === 'connect' ? 'did not complete the MCP handshake' : doing === 'list' ? 'did not list its tools' : 'did not answer the call';
    return ApplicationFailure.create({ type: MCP_ERROR_TYPES.timeout, message: `${who} ${what} within ${server.timeoutMs / 1000} s${said}` });
  }
  // The transport's message for an HTTP error says the body, not the status.
  const status = error instanceof StreamableHTTPError && error.code !== undefined ? `HTTP ${error.code}: ` : '';
  const line = redact(server, firstLine(error));
  const reason = `${status}${line}`;
  // A program that does not exist cannot start on the next attempt, nor is a refused request (401, 404) accepted on it.
  const missing = (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  const refused = error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500;
  return ApplicationFailure.create({
    type: MCP_ERROR_TYPES.unavailable,
    message: missing ? `${who} cannot start: command not found` : `${who} is unavailable: ${reason}${said.includes(line) ? '' : said}`,
    nonRetryable: missing || refused,
  });
}

export function unknownServer(name: string, configured: string[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: MCP_ERROR_TYPES.unknownServer,
    message: `no MCP server "${name}" in this worker's AGENT_MCP_CONFIG (configured: ${configured.join(', ') || 'none'})`,
    nonRetryable: true,
  });
}

export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 300) ?? '';
}

/**
 * What a server says goes into failure lines, and a server knows the secrets its `env` or
 * `headers` gave it: it may print them. Each configured value (and each word of it, for
 * `Bearer <token>`) is masked as the LLM call masks its keys, a start cut off by the
 * clue's clip included, and so is anything shaped like a provider key.
 */
function redact(server: McpServerConfig, text: string): string {
  const values = Object.values(server.kind === 'stdio' ? server.env : server.headers);
  // Whole values first, so a header is masked as one piece before its words are.
  const secrets = [...new Set(values.flatMap((v) => [v, ...v.split(/\s+/)]))].sort((a, b) => b.length - a.length);
  return redactSecrets(text, secrets);
}
