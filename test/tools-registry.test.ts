import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LISTED_ISSUES, validateToolInput } from '../contracts/tools/validate-tool-input';
import { ToolSpecSchema, type ToolCall } from '../contracts/messages';
import { toolActivityOptions } from '../workflows/tools/activity-options';
import { fnv1a128Hex } from '../contracts/tools/idempotency-key';
import { BUILTIN_TOOLS, findTool, idempotencyKey, prepareToolCall, toolSpecs } from '../contracts/tools/registry';

const call = (name: string, input: Record<string, unknown>, extra: Partial<ToolCall> = {}): ToolCall => ({ id: 'toolu_1', name, input, ...extra });

function invalid(prepared: ReturnType<typeof prepareToolCall>): string {
  if (prepared.kind !== 'invalid') throw new Error(`expected an invalid call, got ${prepared.kind}`);
  return prepared.content;
}

describe('tool registry: built-in tools', () => {
  it('offers calculator, http_request, read_file and write_file', () => {
    expect(BUILTIN_TOOLS.map((t) => t.name)).toEqual(['calculator', 'http_request', 'read_file', 'write_file']);
  });

  it('gives only http_request a heartbeat, and every tool a startToClose timeout', () => {
    for (const tool of BUILTIN_TOOLS) expect(tool.timeouts.startToCloseMs).toBeGreaterThan(0);
    expect(BUILTIN_TOOLS.filter((t) => t.timeouts.heartbeatMs !== undefined).map((t) => t.name)).toEqual(['http_request']);
  });
});

describe('tool registry: specs for the provider', () => {
  const specs = toolSpecs();
  const spec = (name: string) => specs.find((s) => s.name === name)!;

  it('derives each JSON Schema from the zod schema, as valid ToolSpecs without $schema', () => {
    expect(specs).toHaveLength(4);
    for (const s of specs) {
      expect(ToolSpecSchema.parse(s)).toEqual(s);
      expect(s.inputSchema).not.toHaveProperty('$schema');
      expect(s.description.length).toBeGreaterThan(20);
    }
    expect(spec('calculator').inputSchema).toMatchObject({
      type: 'object',
      properties: { expression: { type: 'string', minLength: 1, maxLength: 1000 } },
      required: ['expression'],
      additionalProperties: false,
    });
  });

  it('lists the http methods and marks only method and url as required', () => {
    expect(spec('http_request').inputSchema).toMatchObject({
      properties: { method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] }, url: { type: 'string', format: 'uri' } },
      required: ['method', 'url'],
    });
    expect(spec('write_file').inputSchema).toMatchObject({ required: ['path', 'content'] });
    expect(spec('read_file').inputSchema).toMatchObject({ required: ['path'] });
  });

  it('lists only the tools it is given, and refuses two tools with one name', () => {
    const calculator = findTool('calculator')!;
    expect(toolSpecs([calculator]).map((s) => s.name)).toEqual(['calculator']);
    expect(() => toolSpecs([calculator, calculator])).toThrow('duplicate tool name "calculator"');
  });
});

describe('tool registry: preparing a call', () => {
  it('answers an unknown tool name with the list of available tools', () => {
    expect(invalid(prepareToolCall(call('rm_rf', {})))).toBe(
      'Tool call rejected: there is no tool named "rm_rf". Available tools: calculator, http_request, read_file, write_file.',
    );
  });

  it('treats a tool outside the session list as unknown', () => {
    expect(invalid(prepareToolCall(call('http_request', { method: 'GET', url: 'http://x' }), [findTool('calculator')!]))).toContain(
      'Available tools: calculator.',
    );
  });

  it('quotes the invalid JSON back instead of running the tool on {}', () => {
    const content = invalid(prepareToolCall(call('calculator', {}, { invalidJson: '{"expression": "1+' })));
    expect(content).toContain('the arguments for "calculator" are not a valid JSON object: "{\\"expression\\": \\"1+"');
    expect(content).toContain('one JSON object');
  });

  it('bounds the quoted JSON', () => {
    const content = invalid(prepareToolCall(call('calculator', {}, { invalidJson: 'x'.repeat(10_000) })));
    expect(content.length).toBeLessThan(500);
    expect(content).toContain('(10000 characters)');
  });

  it('lists the first issues of arguments with thousands of bad entries, so the refusal stays small', () => {
    const tool = { name: 'tag_all', input: z.strictObject({ tags: z.array(z.string()) }) };
    const refused = validateToolInput(tool, { tags: Array.from({ length: 10_000 }, (_, i) => i) });
    expect(refused.ok).toBe(false);
    const content = refused.ok ? '' : refused.content;
    expect(content.split('\n').filter((line) => line.startsWith('- tags['))).toHaveLength(LISTED_ISSUES);
    expect(content).toContain(`- and ${10_000 - LISTED_ISSUES} more`);
    expect(content.length).toBeLessThan(4_000);
  });

  it('clips one issue that quotes a long key', () => {
    const tool = { name: 'strict', input: z.strictObject({}) };
    const refused = validateToolInput(tool, { ['k'.repeat(5_000)]: 1 });
    expect(refused.ok ? '' : refused.content).toMatch(/^- arguments: unknown field "k{200,}…$/m);
    expect((refused.ok ? '' : refused.content).length).toBeLessThan(1_000);
  });

  it.each([
    ['a missing field', 'calculator', {}, '- expression: is required'],
    ['a wrong type', 'calculator', { expression: 42 }, '- expression: expression must be a string'],
    ['an unknown field', 'calculator', { expression: '1', precision: 3 }, '- arguments: unknown field "precision"'],
    ['an unsupported method', 'http_request', { method: 'get', url: 'http://x' }, '- method: method must be one of GET, HEAD, POST, PUT, PATCH, DELETE (uppercase)'],
    ['a non-http url', 'http_request', { method: 'GET', url: 'file:///etc/passwd' }, '- url: url must be an absolute http:// or https:// URL'],
    ['a relative url', 'http_request', { method: 'GET', url: '/api' }, '- url: url must be an absolute http:// or https:// URL'],
    ['a body on GET', 'http_request', { method: 'GET', url: 'http://x', body: 'hi' }, '- body: a body is not allowed with GET or HEAD'],
    ['a reserved header', 'http_request', { method: 'POST', url: 'http://x', headers: { 'Idempotency-Key': 'mine' } }, 'these headers are set by the tool'],
    ['a bad header name', 'http_request', { method: 'GET', url: 'http://x', headers: { 'a b': '1' } }, '- headers["a b"]: header names may contain only'],
    ['a header value with CRLF', 'http_request', { method: 'GET', url: 'http://x', headers: { a: '1\r\nx: y' } }, '- headers.a: header values must not contain CR, LF or NUL'],
    ['an empty path', 'read_file', { path: '' }, '- path: path must not be empty'],
    ['missing content', 'write_file', { path: 'a.txt' }, '- content: is required'],
  ])('answers %s with a readable error', (_what, name, input, line) => {
    const content = invalid(prepareToolCall(call(name, input)));
    expect(content).toContain(`Tool call rejected: invalid arguments for "${name}":`);
    expect(content).toContain(line);
    expect(content).toMatch(/Fix the arguments and call the tool again\.$/);
  });

  it.each([
    ['calculator', { expression: '1 + 1' }, 'read_only'],
    ['read_file', { path: 'a.txt' }, 'read_only'],
    ['write_file', { path: 'a.txt', content: 'x' }, 'side_effecting'],
    ['http_request', { method: 'GET', url: 'https://example.com' }, 'read_only'],
    ['http_request', { method: 'HEAD', url: 'https://example.com' }, 'read_only'],
    ['http_request', { method: 'POST', url: 'https://example.com', body: '{}' }, 'side_effecting'],
    ['http_request', { method: 'PUT', url: 'https://example.com' }, 'side_effecting'],
    ['http_request', { method: 'PATCH', url: 'https://example.com' }, 'side_effecting'],
    ['http_request', { method: 'DELETE', url: 'https://example.com' }, 'side_effecting'],
  ])('classifies %s %j as %s', (name, input, toolClass) => {
    const prepared = prepareToolCall(call(name, input));
    expect(prepared).toMatchObject({ kind: 'dispatch', toolClass, input });
    expect(prepared.kind === 'dispatch' && prepared.tool.name).toBe(name);
  });
});

describe('tool registry: activity options', () => {
  const http = findTool('http_request')!;

  it('lets Temporal retry read-only calls', () => {
    expect(toolActivityOptions(http, 'read_only')).toEqual({
      startToCloseTimeout: 60_000,
      heartbeatTimeout: 10_000,
      retry: { maximumAttempts: 3, initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 10_000, nonRetryableErrorTypes: ['internal_error', 'PayloadsTooLarge'] },
    });
  });

  it('gives side-effecting calls exactly one attempt', () => {
    expect(toolActivityOptions(http, 'side_effecting').retry).toEqual({ maximumAttempts: 1 });
    expect(toolActivityOptions(findTool('write_file')!, 'side_effecting')).toEqual({ startToCloseTimeout: 10_000, retry: { maximumAttempts: 1 } });
  });
});

describe('idempotency key', () => {
  it('is the same for the same workflow and call', () => {
    expect(idempotencyKey('session-1', 'toolu_01')).toBe(idempotencyKey('session-1', 'toolu_01'));
  });

  it('differs when the call or the workflow differs', () => {
    const keys = new Set([
      idempotencyKey('session-1', 'toolu_01'),
      idempotencyKey('session-1', 'toolu_02'),
      idempotencyKey('session-2', 'toolu_01'),
      idempotencyKey('a/b', 'c'),
      idempotencyKey('a', 'b/c'),
      idempotencyKey('a', 'bc'),
      idempotencyKey('ab', 'c'),
    ]);
    expect(keys.size).toBe(7);
  });

  it('is a bounded HTTP token whatever the ids contain', () => {
    for (const key of [idempotencyKey('w'.repeat(1000), 'call_x'), idempotencyKey('séance 🚀\r\n"', 'id with spaces'), idempotencyKey('', '')]) {
      expect(key).toMatch(/^agent-[0-9a-f]{32}$/);
    }
  });

  it('is pinned, so a code change cannot silently re-key calls in flight', () => {
    expect(idempotencyKey('session-1', 'toolu_01')).toBe('agent-782c87c088aa65ce9d52241da930ffb1');
    expect(idempotencyKey('session-1', 'toolu_01')).toBe(`agent-${fnv1a128Hex(new TextEncoder().encode('9:session-1toolu_01'))}`);
  });

  it('uses FNV-1a 128 as published', () => {
    expect(fnv1a128Hex(new Uint8Array())).toBe('6c62272e07bb014262b821756295c58d');
    expect(fnv1a128Hex(new TextEncoder().encode('a'))).toBe('d228cb696f1a8caf78912b704e4a8964');
  });
});
