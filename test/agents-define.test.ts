import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentCatalogueOf } from '../activities/agents/agent-catalogue';
import { defineAgent, type AgentConfig } from '../contracts/agents/agent-definition';
import { AgentRecordSchema, withAgentSettings } from '../contracts/agents/agent-record';
import { SessionRunInputSchema } from '../contracts/api';
import { defineTool } from '../contracts/tools/custom-tool';
import { PROJECT_ROOT } from '../harness/temporal-binaries';

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Finds an order by its id.',
  input: z.object({ id: z.string() }),
  sideEffects: false,
  run: ({ id }) => ({ id, status: 'shipped' }),
});

const support: AgentConfig = { name: 'support', model: 'anthropic:claude-sonnet-4-5', system: 'You help customers.', tools: ['read_file', lookupOrder], settings: { maxSteps: 8 } };

describe('defineAgent', () => {
  it('freezes a definition, keeping built-in and custom tools apart', () => {
    const agent = defineAgent(support);
    expect(Object.isFrozen(agent)).toBe(true);
    expect(agent.builtinTools).toEqual(['read_file']);
    expect(agent.customTools.map((t) => t.name)).toEqual(['lookup_order']);
    expect(agent.settings).toEqual({ maxSteps: 8 });
  });

  it.each([
    ['a bad name', { ...support, name: 'no spaces' }, 'agent "no spaces": name must be 1 to 64 letters'],
    ['a bad model', { ...support, model: 'gpt-4o' }, 'agent "support": model: model must be "provider:model"'],
    ['an unknown built-in tool', { ...support, tools: ['read_fil'] as never }, 'agent "support": tools: unknown built-in tool "read_fil" (built-in tools: calculator, http_request, read_file, write_file)'],
    ['a tool named twice', { ...support, tools: ['read_file', 'read_file'] }, 'agent "support": tools: names read_file twice'],
    ['a tool not made by defineTool', { ...support, tools: [{ name: 'lookup_order' }] as never }, 'agent "support": tools: must list built-in tool names and tools made by defineTool'],
    ['a setting out of its bounds', { ...support, settings: { maxSteps: 0 } }, 'agent "support": settings: maxSteps: must be a whole number from 1 to 500'],
    ['an unknown setting', { ...support, settings: { maxStep: 3 } as never }, 'agent "support": settings: Unrecognized key: "maxStep"'],
    ['a bad MCP server name', { ...support, mcp: ['a b'] }, 'agent "support": mcp:'],
    ['a fallback that is not a model', { ...support, settings: { fallbacks: ['gpt-5'] } }, 'agent "support": settings: fallbacks.0: model must be "provider:model"'],
    ['a fallback beside the model that is not a model', { ...support, fallbacks: ['gpt-5'] }, 'agent "support": fallbacks: 0: model must be "provider:model"'],
    ['fallbacks given twice', { ...support, fallbacks: ['openai:gpt-5'], settings: { fallbacks: ['openai:gpt-5'] } }, 'agent "support": fallbacks: and settings.fallbacks both give the fallback models; give one of them'],
    ['a fallback time out of its bounds', { ...support, settings: { fallbackAfterMs: 500 } }, 'agent "support": settings: fallbackAfterMs: must be a whole number from 1000 to 240000'],
    ['an unknown priority', { ...support, settings: { priority: 'urgent' as never } }, 'agent "support": settings: priority: must be interactive or batch'],
    ['a bad sub-agent name', { ...support, agents: ['no spaces'] }, 'agent "support": agents: must be 1 to 64 letters'],
    ['a sub-agent named twice', { ...support, agents: ['billing', 'billing'] }, 'agent "support": agents: names billing twice'],
    ['a depth out of its bounds', { ...support, settings: { maxAgentDepth: 11 } }, 'agent "support": settings: maxAgentDepth:'],
  ])('refuses %s in one line naming the agent', (_, config, message) => {
    expect(() => defineAgent(config as AgentConfig)).toThrow(message);
  });
});

describe("a worker's agents", () => {
  it('refuses two agents under one name at worker start', () => {
    expect(() => agentCatalogueOf([defineAgent(support), defineAgent({ ...support, description: 'again' })])).toThrow('worker agents: "support" is defined twice');
  });

  it('refuses at worker start an agent offered one the worker does not define, naming both', () => {
    expect(() => agentCatalogueOf([defineAgent({ ...support, agents: ['billing'] })])).toThrow('worker agents: "support" is offered agent "billing", which this worker does not define');
  });

  it("offers an agent's sub-agents to every session it starts, and its depth as a setting", () => {
    const billing = defineAgent({ name: 'billing', model: 'openai:gpt-4o-mini' });
    const [entry] = agentCatalogueOf([defineAgent({ ...support, agents: ['billing'], settings: { maxAgentDepth: 2 } }), billing]);
    expect(entry?.record.settings).toMatchObject({ agents: ['billing'], maxAgentDepth: 2 });
  });

  it('lists each tool with its lane, and gives a session the settings under its own', () => {
    const [entry] = agentCatalogueOf([defineAgent(support)]);
    expect(entry?.tools).toEqual([
      { name: 'read_file', kind: 'built-in', lane: 'read_only' },
      { name: 'lookup_order', kind: 'custom', lane: 'read_only' },
    ]);
    const record = entry?.record;
    expect(withAgentSettings({ agent: record, maxSteps: 3, maxTokens: undefined })).toMatchObject({ model: 'anthropic:claude-sonnet-4-5', maxSteps: 3, tools: ['read_file'], customTools: ['lookup_order'] });
  });
});

describe("an agent's fallbacks and priority", () => {
  const withFallbacks = defineAgent({
    ...support,
    settings: { fallbacks: ['openai:gpt-5', 'google:gemini-2.5-pro'], fallbackAfterMs: 20_000, fallbackReturnAfterMs: 600_000, priority: 'batch' },
  });

  it('reach the session its record starts, through the record as Temporal carries it, a session\'s own setting winning', () => {
    const [entry] = agentCatalogueOf([withFallbacks]);
    const record = AgentRecordSchema.parse(JSON.parse(JSON.stringify(entry?.record)));
    const input = SessionRunInputSchema.parse(withAgentSettings({ agent: record, priority: 'interactive' }));
    expect(input).toMatchObject({
      model: 'anthropic:claude-sonnet-4-5',
      fallbacks: ['openai:gpt-5', 'google:gemini-2.5-pro'],
      fallbackAfterMs: 20_000,
      fallbackReturnAfterMs: 600_000,
      priority: 'interactive',
    });
  });

  it('as docs/fallback.md defines them: the example agent starts sessions with its fallbacks', async () => {
    const text = await readFile(path.join(PROJECT_ROOT, 'docs', 'fallback.md'), 'utf8');
    const block = /## Settings\n[^]*?```ts\n([^]*?)```/.exec(text)?.[1];
    if (!block) throw new Error('docs/fallback.md has no ts block under "## Settings"');
    const file = path.join(PROJECT_ROOT, 'test-results', 'docs-fallback-example.ts');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, block.replace("from 'durable-agent-worker'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))}`));
    const { support: documented } = (await import(pathToFileURL(file).href)) as { support: ReturnType<typeof defineAgent> };
    const [entry] = agentCatalogueOf([documented]);
    expect(SessionRunInputSchema.parse(withAgentSettings({ agent: entry?.record }))).toMatchObject({
      model: 'anthropic:claude-sonnet-4-5',
      fallbacks: ['openai:gpt-5', 'google:gemini-2.5-pro'],
      fallbackAfterMs: 20_000,
    });
  });

  it('as docs/sub-agents.md defines them: the planner is offered the researcher, and its sessions its depth', async () => {
    const text = await readFile(path.join(PROJECT_ROOT, 'docs', 'sub-agents.md'), 'utf8');
    const block = /## Offering agents\n[^]*?```ts\n([^]*?)```/.exec(text)?.[1];
    if (!block) throw new Error('docs/sub-agents.md has no ts block under "## Offering agents"');
    const file = path.join(PROJECT_ROOT, 'test-results', 'docs-sub-agents-example.ts');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, block.replace("from 'durable-agent-worker'", `from ${JSON.stringify(path.join(PROJECT_ROOT, 'index.ts'))}`));
    const { planner, researcher } = (await import(pathToFileURL(file).href)) as Record<'planner' | 'researcher', ReturnType<typeof defineAgent>>;
    const [entry] = agentCatalogueOf([planner, researcher]);
    expect(SessionRunInputSchema.parse(withAgentSettings({ agent: entry?.record }))).toMatchObject({ agents: ['researcher'], maxAgentDepth: 2 });
    expect(() => agentCatalogueOf([planner])).toThrow('worker agents: "planner" is offered agent "researcher", which this worker does not define');
  });
});
