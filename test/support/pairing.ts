/**
 * Tool calls without a result in a request body as a provider received it. Anthropic
 * rejects a request whose `tool_use` blocks are not each answered by a `tool_result` in the
 * next user message; OpenAI does the same for `tool_calls` and `tool` messages; Gemini
 * pairs the `functionCall` parts of a model turn with the `functionResponse` parts of the
 * turn after it, by position and name (it sends no call ids).
 *
 * A body of any other shape throws: a check that silently finds nothing to pair would pass
 * for every request it cannot read.
 */
export function unpairedToolCalls(body: unknown): string[] {
  const shape = body as { messages?: unknown; contents?: unknown } | null | undefined;
  if (Array.isArray(shape?.messages)) return unpairedInMessages(shape.messages);
  if (Array.isArray(shape?.contents)) return unpairedInContents(shape.contents);
  throw new Error(`unpairedToolCalls: not a request body it knows (no messages, no contents): ${String(JSON.stringify(body)).slice(0, 200)}`);
}

/** Anthropic Messages and OpenAI Chat Completions. */
function unpairedInMessages(messages: unknown[]): string[] {
  const unpaired: string[] = [];
  messages.forEach((raw, i) => {
    const m = raw as { role: string; content?: unknown; tool_calls?: { id: string }[] };
    if (m.role !== 'assistant') return;
    const callIds = Array.isArray(m.content)
      ? (m.content as { type: string; id?: string }[]).filter((b) => b.type === 'tool_use').map((b) => b.id as string)
      : (m.tool_calls ?? []).map((c) => c.id);
    if (callIds.length === 0) return;
    const answered = new Set<string>();
    for (const next of messages.slice(i + 1)) {
      const n = next as { role: string; content?: unknown; tool_call_id?: string };
      if (n.role === 'tool' && n.tool_call_id) answered.add(n.tool_call_id);
      else if (n.role === 'user' && Array.isArray(n.content)) {
        for (const b of n.content as { type: string; tool_use_id?: string }[]) if (b.type === 'tool_result' && b.tool_use_id) answered.add(b.tool_use_id);
      }
      if (n.role === 'assistant') break;
    }
    unpaired.push(...callIds.filter((id) => !answered.has(id)));
  });
  return unpaired;
}

type GeminiPart = { functionCall?: { name?: string }; functionResponse?: { name?: string } };
type GeminiContent = { role?: string; parts?: GeminiPart[] };

/** Gemini `contents`: each call is named `name@content.part`, as Gemini has no ids. */
function unpairedInContents(contents: unknown[]): string[] {
  const unpaired: string[] = [];
  contents.forEach((raw, i) => {
    const content = raw as GeminiContent;
    if (content.role !== 'model') return;
    const calls = (content.parts ?? []).flatMap((p, j) => (p.functionCall ? [{ name: p.functionCall.name ?? '', at: `${i}.${j}` }] : []));
    if (calls.length === 0) return;
    const next = contents[i + 1] as GeminiContent | undefined;
    const responses = next?.role === 'user' ? (next.parts ?? []).flatMap((p) => (p.functionResponse ? [p.functionResponse.name ?? ''] : [])) : [];
    calls.forEach((call, k) => {
      if (responses[k] !== call.name) unpaired.push(`${call.name}@${call.at}`);
    });
  });
  return unpaired;
}
