/**
 * A summariser that calls a tool: the compaction request keeps the session's tools
 * (Anthropic refuses tool blocks without them) and forbids calling them, in each provider's
 * own field, so the answer is text by contract. The scripted LLM honours the field as the
 * providers do: a tool call scripted for the compaction comes back written out as text,
 * which becomes the summary, and the user's turn goes on. A real session on a real
 * Temporal server, on each provider's wire.
 */
import { describe, expect, it } from 'vitest';
import { endSession, readLog, sendAndWait, startSession } from '../client/sessions';
import { useAgentHarness } from './support/agent-harness';
import { turnThatRead } from '../harness/turn-that-read';

const h = useAgentHarness();

const PROVIDERS = ['anthropic', 'openai', 'google'] as const;

/** What each provider is sent to forbid tool calls for one request. */
const NO_TOOL_CALLS = {
  anthropic: { tool_choice: { type: 'none' } },
  openai: { tool_choice: 'none' },
  google: { toolConfig: { functionCallingConfig: { mode: 'NONE' } } },
} as const;

describe.each(PROVIDERS)('a summariser scripted to call a tool, on %s', (provider) => {
  it('is asked for text only, answers with text, and the turn completes on that summary', async () => {
    const model = `compact-tool-choice-${provider}-${Date.now()}`;
    // About 7 000 tokens of an 8 000-token window: past 0.75 of it, so the first step compacts.
    h().llm.scriptCompaction(model, { kind: 'tool_calls', calls: [{ name: 'read_file', input: { path: 'big.txt' } }] });
    h().llm.script(model, { kind: 'text', text: 'It was all q.' });
    const session = await startSession(h().client, h().env, {
      model: `${provider}:${model}`,
      tools: ['read_file'],
      contextWindow: 8_000,
      idleTimeoutMs: 120_000,
      fork: { fromWorkflowId: `a-session-on-${provider}`, events: turnThatRead('q'.repeat(28_000)) },
    });

    expect(await sendAndWait(session, 'what was in it?')).toMatchObject({ status: 'completed', turn: 2 });

    const [compaction, ...rest] = h().llm.requests({ model });
    expect(compaction).toMatchObject({ purpose: 'compact', replyKind: 'tool_calls', body: NO_TOOL_CALLS[provider] });
    expect(rest.map((r) => r.purpose)).toEqual(['step']);
    expect(JSON.stringify(rest[0]?.body)).not.toMatch(/tool_choice|toolConfig/);
    const compacted = (await readLog(session)).filter((e) => e.type === 'context/compacted');
    expect(compacted).toEqual([expect.objectContaining({ turn: 2, summary: 'read_file {"path":"big.txt"}' })]);
    await endSession(session);
  });
});
