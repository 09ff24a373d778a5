/**
 * Tool calls without a result in a request body as a provider received it. Anthropic
 * rejects a request whose `tool_use` blocks are not each answered by a `tool_result`
 * in the next user message; OpenAI does the same for `tool_calls` and `tool` messages.
 */
export function unpairedToolCalls(body: unknown): string[] {
  const messages = (body as { messages?: unknown[] }).messages ?? [];
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
