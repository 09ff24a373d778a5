import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { McpConfig, McpServerConfig } from '../../config/mcp-config';
import { VERSION } from '../../contracts/version';
import { mcpFailure, unknownServer } from './mcp-failure';

/** What a server said last on stderr, or what could not be read on its stdout: the clue a failure line carries. */
const CLUE_CHARS = 300;

export interface Connection {
  client: Client;
  /** The newest stderr text and stdout parse error, for the message of a failure. */
  clue(): string;
  /** The server's tools as this worker last listed them on this connection (list-tools.ts). */
  tools?: ReadonlyMap<string, Tool>;
}

/**
 * The SDK checks a result's structured content against the tool's `outputSchema` with a
 * regex engine that backtracks, on the worker's main thread: a hostile schema would stall
 * every activity of the worker. The worker keeps structured content as the server gave it
 * (outcome.ts), so it does not check it.
 */
const OUTPUT_UNCHECKED: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/**
 * One connection per configured server per worker process, opened at its first use and
 * shared by every session and call on this worker. A connection that closes (the server
 * exited or crashed, the HTTP session ended) is forgotten, so the next call opens a new
 * one; the call that was running on it fails as `mcp_unavailable`.
 */
export class McpConnections {
  readonly #config: McpConfig;
  readonly #open = new Map<string, Promise<Connection>>();

  constructor(config: McpConfig) {
    this.#config = config;
  }

  server(name: string): McpServerConfig {
    const server = this.#config.get(name);
    if (!server) throw unknownServer(name, [...this.#config.keys()]);
    return server;
  }

  /** The server's client, connected and initialized within its `timeoutMs`. */
  async client(name: string): Promise<Connection> {
    const server = this.server(name);
    let opening = this.#open.get(name);
    if (!opening) {
      opening = this.#connect(name, server);
      this.#open.set(name, opening);
      const forget = () => {
        if (this.#open.get(name) === opening) this.#open.delete(name);
      };
      opening.catch(forget);
    }
    return opening;
  }

  /** Closes every connection (stdio servers are stopped); the worker calls this when it stops. */
  async close(): Promise<void> {
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.allSettled(open.map(async (c) => (await c).client.close()));
  }

  async #connect(name: string, server: McpServerConfig): Promise<Connection> {
    let clue = '';
    const note = (text: string) => {
      clue = `${clue} ${text}`.trim().slice(-CLUE_CHARS);
    };
    const transport = transportFor(server, note);
    const client = new Client({ name: 'durable-agent-worker', version: VERSION }, { jsonSchemaValidator: OUTPUT_UNCHECKED });
    client.onerror = (error) => note(error.message);
    const connection: Connection = { client, clue: () => clue };
    client.onclose = () => {
      const current = this.#open.get(name);
      void current?.then((c) => {
        if (c === connection) this.#open.delete(name);
      }, () => undefined);
    };
    try {
      await client.connect(transport, { timeout: server.timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw mcpFailure(name, server, error, clue, 'connect');
    }
    return connection;
  }
}

function transportFor(server: McpServerConfig, note: (text: string) => void): Transport {
  if (server.kind === 'http') {
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
  }
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: server.env,
    ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    // Piped, and always read: a full pipe would block the server; its last words explain a failure.
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => note(chunk.toString('utf8').replace(/\s+/g, ' ')));
  return transport;
}
