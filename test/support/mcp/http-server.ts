/**
 * A Streamable HTTP MCP server built with the SDK's own McpServer, run as its own process
 * by the tests (test/support/mcp/servers.ts). It prints `{"port": N}` once listening.
 *
 * Its tools: `first` (read-only), `structured` (read-only, structured content and no text), `huge` (read-only, 3 MiB of text), `slow_write` (no annotations, so side-effecting: it
 * runs until released or cancelled) and `wait` (read-only, until cancelled). `POST
 * /control/add-tool {"name"}` adds a read-only tool to every session, as a server whose
 * list changes mid-session; `GET /control/events` is what it saw (`call <tool>`,
 * `cancelled <tool>`, each distinct `authorization <header>`); `POST /control/release` lets every running `slow_write` finish.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const events: string[] = [];
const addedTools: string[] = [];
const servers: McpServer[] = [];
const transports = new Map<string, StreamableHTTPServerTransport>();
let release: () => void = () => undefined;
let released = new Promise<void>((resolve) => (release = resolve));

function untilCancelled(signal: AbortSignal, tool: string): Promise<void> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => {
      events.push(`cancelled ${tool}`);
      resolve();
    });
  });
}

function addTool(server: McpServer, name: string): void {
  server.registerTool(name, { description: `added tool ${name}`, annotations: { readOnlyHint: true } }, () => {
    events.push(`call ${name}`);
    return { content: [{ type: 'text', text: `${name} answered` }] };
  });
}

function newServer(): McpServer {
  const server = new McpServer({ name: 'test-http', version: '1.0.0' });
  server.registerTool('first', { description: 'the first tool', annotations: { readOnlyHint: true } }, () => {
    events.push('call first');
    return { content: [{ type: 'text', text: 'first answered' }] };
  });
  server.registerTool('slow_write', { description: 'writes slowly', inputSchema: { text: z.string() } }, async ({ text }, extra) => {
    events.push(`call slow_write ${text}`);
    await Promise.race([released, untilCancelled(extra.signal, 'slow_write')]);
    return { content: [{ type: 'text', text: `wrote ${text}` }] };
  });
  server.registerTool('wait', { description: 'waits until cancelled', annotations: { readOnlyHint: true } }, async (extra) => {
    events.push('call wait');
    await untilCancelled(extra.signal, 'wait');
    return { content: [{ type: 'text', text: 'waited' }] };
  });
  server.registerTool('structured', { description: 'answers with structured content only', annotations: { readOnlyHint: true }, outputSchema: { n: z.number() } }, () => ({
    content: [],
    structuredContent: { n: 7 },
  }));
  server.registerTool('huge', { description: 'answers with 3 MiB of text', annotations: { readOnlyHint: true } }, () => {
    events.push('call huge');
    return { content: [{ type: 'text', text: 'x'.repeat(3 * 1024 * 1024) }] };
  });
  for (const name of addedTools) addTool(server, name);
  servers.push(server);
  return server;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/control/events') return void res.end(JSON.stringify(events));
  if (url.pathname === '/control/release') {
    release();
    released = new Promise<void>((resolve) => (release = resolve));
    return void res.end('{}');
  }
  if (url.pathname === '/control/add-tool') {
    const { name } = (await body(req)) as { name: string };
    addedTools.push(name);
    for (const server of servers) addTool(server, name);
    return void res.end('{}');
  }
  if (url.pathname !== '/mcp') return void res.writeHead(404).end();
  const auth = `authorization ${req.headers.authorization ?? '(none)'}`;
  if (!events.includes(auth)) events.push(auth);
  const sessionId = req.headers['mcp-session-id'];
  const parsed = req.method === 'POST' ? await body(req) : undefined;
  let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
  if (!transport) {
    const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) });
    await newServer().connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res, parsed);
}

const http = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  });
});
http.listen(0, '127.0.0.1', () => {
  const address = http.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
