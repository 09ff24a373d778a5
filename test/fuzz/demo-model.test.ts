/**
 * Fuzzes the scripted LLM's offline demo model (testing/scripted-llm/demo-model.ts), which
 * answers whatever request reaches a model with nothing scripted. Pure, so many cases:
 * any JSON body is answered with a reply the script schema accepts, never a throw (which
 * the server would turn into a 500); and for the agent's own conversations, in each
 * provider's real request body, the same request gets the same reply, a call names only a
 * tool the request offers, and once that call is answered the next reply is text, so a
 * turn on the demo model always ends.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { anthropicRequestBody } from '../../activities/llm/providers/anthropic';
import { geminiRequestBody } from '../../activities/llm/providers/gemini';
import { openAiRequestBody } from '../../activities/llm/providers/openai';
import type { LlmRequest, Message, ToolResultCode } from '../../contracts/messages';
import type { ProviderId } from '../../contracts/model-ref';
import { toolSpecs } from '../../contracts/tools/registry';
import { demoReply } from '../../testing/scripted-llm/demo-model';
import { ScriptedReplySchema } from '../../testing/scripted-llm/script';
import { assertProperty } from '../support/fuzz';

const PROVIDERS: ProviderId[] = ['anthropic', 'openai', 'google'];

const BODIES: Record<ProviderId, (request: LlmRequest) => Record<string, unknown>> = {
  anthropic: anthropicRequestBody,
  openai: (request) => openAiRequestBody(request, 'http://127.0.0.1:1/v1'),
  google: geminiRequestBody,
};

/** Words that steer the demo model towards each of its tools, around text of any kind. */
const prompt = fc.oneof(
  fc.string(),
  fc.stringMatching(/^[\d+\-*/().^% ]{1,24}$/),
  fc
    .tuple(
      fc.constantFrom('What is ', 'Read ', "Write '", 'write ', "What's in ", 'show me the file ', 'save "', 'compute -'),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('', "' to a.txt", '" into notes/b.md', ' to x.txt', '.txt', '*7?', ')', ' × 2'),
    )
    .map((parts) => parts.join('')),
);

/** Turns that ended before this one: a question and its answer. */
const earlierTurns = fc.array(fc.tuple(fc.string({ minLength: 1 }), fc.string()), { maxLength: 3 }).map((turns) =>
  turns.flatMap(([question, answer]): Message[] => [
    { role: 'user', text: question },
    { role: 'assistant', text: answer, toolCalls: [] },
  ]),
);

const tools = fc.subarray(toolSpecs());
const resultCode = fc.constantFrom<ToolResultCode>('ok', 'error', 'TOOL_OUTCOME_UNKNOWN', 'TOOL_NOT_STARTED');

describe('the demo model, fuzzed', () => {
  it.each(PROVIDERS)('answers any JSON body of %s with a valid reply, never a throw', async (provider) => {
    // Messages of every role with fields of any kind, where the readers look, as well as any JSON at all.
    const part = fc.record(
      { type: fc.constantFrom('text', 'tool_use', 'tool_result', 'image'), text: fc.jsonValue(), id: fc.jsonValue(), tool_use_id: fc.jsonValue(), content: fc.jsonValue(), functionCall: fc.jsonValue(), functionResponse: fc.jsonValue() },
      { requiredKeys: [] },
    );
    const message = fc.record(
      { role: fc.constantFrom('user', 'assistant', 'tool', 'model', 'system'), content: fc.oneof(fc.jsonValue(), fc.array(part)), parts: fc.oneof(fc.jsonValue(), fc.array(part)), tool_calls: fc.jsonValue(), tool_call_id: fc.jsonValue() },
      { requiredKeys: [] },
    );
    const list = fc.oneof(fc.jsonValue(), fc.array(message, { maxLength: 6 }));
    const body = fc.oneof(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.record({ messages: list, contents: list, tools: fc.oneof(fc.jsonValue(), fc.array(fc.record({ name: fc.jsonValue(), function: fc.jsonValue(), functionDeclarations: fc.jsonValue() }, { requiredKeys: [] }))) }, { requiredKeys: [] }),
    );
    await assertProperty(
      300,
      fc.property(body, (b) => {
        ScriptedReplySchema.parse(demoReply(provider, b as Record<string, unknown>));
      }),
    );
  });

  it.each(PROVIDERS)('on %s: the same request gets the same reply, calls only offered tools, and ends the turn once its call is answered', async (provider) => {
    await assertProperty(
      200,
      fc.property(earlierTurns, prompt, tools, fc.string(), resultCode, (before, text, offered, content, code) => {
        const request = (messages: Message[]): LlmRequest => ({ model: 'demo', messages, tools: offered, maxTokens: 256 });
        const messages: Message[] = [...before, { role: 'user', text }];
        const body = BODIES[provider](request(messages));
        const reply = demoReply(provider, body);
        ScriptedReplySchema.parse(reply);
        if (JSON.stringify(demoReply(provider, structuredClone(body))) !== JSON.stringify(reply)) throw new Error('the same request got another reply');
        if (reply.kind !== 'tool_calls') return;

        const names = offered.map((t) => t.name);
        const calls = reply.calls.map((call, i) => ({ id: call.id ?? `gemini-${i}`, name: call.name, input: call.input ?? {} }));
        for (const call of calls) if (!names.includes(call.name)) throw new Error(`called ${call.name}, which the request does not offer`);
        const answered: Message[] = [
          ...messages,
          { role: 'assistant', text: reply.text ?? '', toolCalls: calls },
          ...calls.map((call): Message => ({ role: 'tool', toolCallId: call.id, name: call.name, code, content })),
        ];
        const next = demoReply(provider, BODIES[provider](request(answered)));
        if (next.kind !== 'text') throw new Error(`after its call was answered the demo model replied ${next.kind}, not text`);
      }),
    );
  });
});
