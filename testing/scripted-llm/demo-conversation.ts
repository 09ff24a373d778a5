import type { Provider } from './wire/dialect';

/**
 * What the demo model (demo-model.ts) needs of a request, read from any of the three wire
 * formats: what the user said last, which tools the request offers, and the tool results
 * that came after it. Only that: the demo model answers the user's newest words and stops
 * once its tool has answered, so it never has to understand a whole conversation.
 */
export interface DemoConversation {
  /** The text of the user's last message that holds text; '' when there is none. */
  prompt: string;
  /** The names of the tools the request offers. */
  tools: string[];
  /** The tool results after that message, in order. */
  results: DemoResult[];
}

export interface DemoResult {
  /** The tool that answered: named by the call it answers (by id), or by the result itself (Gemini). */
  name: string;
  content: string;
}

type Body = Record<string, unknown>;
type Item = Record<string, unknown>;

/** The conversation as one sequence, so every provider's rules of turns and merging read the same way. */
type Event = { kind: 'user'; text: string } | { kind: 'call'; id: string; name: string } | { kind: 'result'; callId?: string; name?: string; content: string };

export function readConversation(provider: Provider, body: Body): DemoConversation {
  const events = provider === 'google' ? geminiEvents(body) : provider === 'openai' ? openAiEvents(body) : anthropicEvents(body);
  const tools = provider === 'google' ? geminiTools(body) : provider === 'openai' ? openAiTools(body) : anthropicTools(body);
  let start = -1;
  events.forEach((event, i) => {
    if (event.kind === 'user') start = i;
  });
  const prompt = start >= 0 ? (events[start] as { text: string }).text : '';
  const callNames = new Map(events.flatMap((e) => (e.kind === 'call' ? [[e.id, e.name] as const] : [])));
  const results = events
    .slice(start + 1)
    .flatMap((e) => (e.kind === 'result' ? [{ name: e.name ?? callNames.get(e.callId ?? '') ?? 'unknown', content: e.content }] : []));
  return { prompt, tools, results };
}

const items = (value: unknown): Item[] => (Array.isArray(value) ? value.filter((v): v is Item => typeof v === 'object' && v !== null) : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? ''));
const textParts = (content: unknown): string[] =>
  typeof content === 'string' ? [content] : items(content).flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : []));
const nonEmpty = (texts: string[]): Event[] => (texts.join('\n').trim() === '' ? [] : [{ kind: 'user', text: texts.join('\n') }]);

function anthropicTools(body: Body): string[] {
  return items(body.tools).flatMap((t) => (typeof t.name === 'string' ? [t.name] : []));
}

/** Block by block: a user turn may hold tool results and then text the user typed while the tools ran. */
function anthropicEvents(body: Body): Event[] {
  return items(body.messages).flatMap((m): Event[] => {
    if (typeof m.content === 'string') return m.role === 'user' ? nonEmpty([m.content]) : [];
    return items(m.content).flatMap((b): Event[] => {
      if (m.role === 'assistant') return b.type === 'tool_use' ? [{ kind: 'call', id: text(b.id), name: text(b.name) }] : [];
      if (m.role !== 'user') return [];
      if (b.type === 'tool_result') return [{ kind: 'result', callId: text(b.tool_use_id), content: textParts(b.content).join('\n') }];
      return b.type === 'text' && typeof b.text === 'string' ? nonEmpty([b.text]) : [];
    });
  });
}

function openAiTools(body: Body): string[] {
  return items(body.tools).flatMap((t) => {
    const fn = t.function as Item | undefined;
    return typeof fn?.name === 'string' ? [fn.name] : [];
  });
}

function openAiEvents(body: Body): Event[] {
  return items(body.messages).flatMap((m): Event[] => {
    if (m.role === 'user') return nonEmpty(textParts(m.content));
    if (m.role === 'tool') return [{ kind: 'result', callId: text(m.tool_call_id), content: textParts(m.content).join('\n') }];
    if (m.role !== 'assistant') return [];
    return items(m.tool_calls).map((c) => ({ kind: 'call', id: text(c.id), name: text((c.function as Item | undefined)?.name) }));
  });
}

function geminiTools(body: Body): string[] {
  return items(body.tools).flatMap((t) => items(t.functionDeclarations).flatMap((d) => (typeof d.name === 'string' ? [d.name] : [])));
}

/** Gemini has no call ids: a response names its function, which is all the demo model asks of it. */
function geminiEvents(body: Body): Event[] {
  return items(body.contents).flatMap((c): Event[] => {
    // `role` may be omitted for a single-turn request, and then it means the user.
    if (c.role !== undefined && c.role !== 'user') return [];
    return items(c.parts).flatMap((p): Event[] => {
      const response = p.functionResponse as Item | undefined;
      if (typeof response === 'object' && response !== null) {
        const answer = (response.response ?? {}) as Item;
        return [{ kind: 'result', name: text(response.name), content: text(answer.output ?? answer.error ?? answer) }];
      }
      return typeof p.text === 'string' ? nonEmpty([p.text]) : [];
    });
  });
}
