import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The real MCP servers from npm (devDependencies), started over stdio by the worker. */
export const EVERYTHING_SERVER = { command: process.execPath, args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
export function filesystemServer(dir: string) {
  return { command: process.execPath, args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir] };
}

/** The server of hostile-server.ts in one of its modes, as a config entry; its calls go to the file `events`. */
export function hostileServer(mode: 'tools' | 'endless' | 'crowd' | 'deep' | 'leaky', events: string) {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', fileURLToPath(new URL('./hostile-server.ts', import.meta.url)), mode],
    cwd: ROOT,
    env: { HOSTILE_EVENTS: events },
  };
}

/** Writes `{"mcpServers": servers}` to a fresh file and returns its path, for AGENT_MCP_CONFIG. */
export async function writeMcpConfig(servers: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mcp-config-'));
  const file = path.join(dir, 'mcp.json');
  await writeFile(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

export interface TestHttpMcpServer {
  url: string;
  /** What the server saw: `call <tool>`, `cancelled <tool>`. */
  events(): Promise<string[]>;
  addTool(name: string): Promise<void>;
  releaseWrites(): Promise<void>;
  close(): Promise<void>;
}

/** The Streamable HTTP server of http-server.ts, in its own process. */
export async function startHttpMcpServer(): Promise<TestHttpMcpServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./http-server.ts', import.meta.url))], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await firstLine(child);
  const base = `http://127.0.0.1:${port}`;
  const control = async (route: string, body?: unknown) => {
    const response = await fetch(`${base}/control/${route}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
    return response.json() as Promise<unknown>;
  };
  return {
    url: `${base}/mcp`,
    events: async () => (await control('events')) as string[],
    addTool: async (name) => void (await control('add-tool', { name })),
    releaseWrites: async () => void (await control('release', {})),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function firstLine(child: ChildProcess): Promise<number> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`the test MCP server exited with ${code} before listening`))));
  const line = await Promise.race([new Promise<string>((resolve) => lines.once('line', resolve)), exited]);
  return (JSON.parse(line) as { port: number }).port;
}

/** An HTTP server on 127.0.0.1 that answers every request with 500: an MCP endpoint that is broken. */
export async function startFailingHttpServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
