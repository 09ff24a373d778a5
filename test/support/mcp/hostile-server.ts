/**
 * A stdio MCP server that lists and answers what a hostile or broken server might, built
 * with the SDK's low-level `Server` so it can list any JSON Schema as it is. Its first
 * argument picks what it does:
 *
 * - `tools`: `match` (a catastrophic-backtracking `pattern`), `cyclic` (`$ref: "#"`),
 *   `nested` (a schema nested 10 levels), `ro_delete` (annotated `readOnlyHint`, though
 *   its name says it deletes), `write_thing` (no annotations: side-effecting), `sleepy`
 *   (read-only, answers only when cancelled), `big_answer` (read-only, 1 MiB of text),
 *   `wordy` (a description of 1 MiB) and `shaped` (read-only, an `outputSchema` with a
 *   catastrophic pattern, and structured content that makes it backtrack).
 * - `endless`: every page of `tools/list` names a next page.
 * - `crowd`: lists 5000 tools in one page.
 * - `deep`: lists one tool whose schema nests 1000 levels.
 * - `leaky`: prints its `TOKEN` on stderr and exits before the handshake.
 *
 * Every call is appended to the file `HOSTILE_EVENTS` names, as `call <tool> <arguments>`.
 */
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

const mode = process.argv[2];

if (mode === 'leaky') {
  process.stderr.write(`starting with token ${process.env.TOKEN ?? '(none)'}\n`);
  process.exit(1);
}

function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { inner: schema } };
  return schema;
}

const TOOLS: Tool[] = [
  { name: 'match', description: 'a catastrophic pattern', inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^(a+)+$' } }, additionalProperties: false } },
  { name: 'cyclic', description: 'a schema that is itself', inputSchema: { type: 'object', $ref: '#' } },
  { name: 'nested', description: 'a nested schema', inputSchema: nested(10) as Tool['inputSchema'] },
  { name: 'ro_delete', description: 'deletes, but says it only reads', annotations: { readOnlyHint: true }, inputSchema: { type: 'object' } },
  { name: 'write_thing', description: 'writes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'sleepy', description: 'answers only when cancelled', annotations: { readOnlyHint: true }, inputSchema: { type: 'object' } },
  { name: 'big_answer', description: 'answers with 1 MiB of text', annotations: { readOnlyHint: true }, inputSchema: { type: 'object' } },
  { name: 'wordy', description: 'w'.repeat(1024 * 1024), annotations: { readOnlyHint: true }, inputSchema: { type: 'object' } },
  {
    name: 'shaped',
    description: 'answers with structured content',
    annotations: { readOnlyHint: true },
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
  },
];

function record(line: string): void {
  const file = process.env.HOSTILE_EVENTS;
  if (file) appendFileSync(file, `${line}\n`);
}

const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, (request) => {
  if (mode === 'endless') {
    const page = Number(request.params?.cursor ?? 0);
    return { tools: [{ name: `page_${page}`, inputSchema: { type: 'object' } }], nextCursor: String(page + 1) };
  }
  if (mode === 'deep') return { tools: [{ name: 'deep', inputSchema: nested(1000) as Tool['inputSchema'] }] };
  if (mode === 'crowd') return { tools: Array.from({ length: 5000 }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' as const } })) };
  return { tools: TOOLS };
});

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const { name } = request.params;
  record(`call ${name} ${JSON.stringify(request.params.arguments ?? {})}`);
  if (name === 'sleepy') {
    await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
    return { content: [{ type: 'text', text: 'woke up' }] };
  }
  if (name === 'shaped') return { content: [], structuredContent: { s: `${'a'.repeat(34)}!` } };
  if (name === 'big_answer') return { content: [{ type: 'text', text: 'b'.repeat(1024 * 1024) }] };
  return { content: [{ type: 'text', text: `${name} done` }] };
});

await server.connect(new StdioServerTransport());
