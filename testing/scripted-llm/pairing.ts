/**
 * Tool calls and tool results that are not paired, in a request body as a provider receives
 * it. Every provider refuses such a request with a 400 (each dialect words it, wire/*.ts),
 * so the scripted LLM refuses it too, and tests check the bodies it recorded with
 * `unpairedToolCalls`: one check for both, so they cannot drift apart.
 *
 * What each provider pairs:
 * - Anthropic: the `tool_use` blocks of an assistant message are each answered by a
 *   `tool_result` in the next message, and a `tool_result` answers a `tool_use` of the
 *   message before it. Consecutive messages of one role count as one, as the API joins them.
 * - OpenAI: an assistant message with `tool_calls` is followed at once by one `tool`
 *   message per call id, and a `tool` message answers a call of the assistant message
 *   before that run of tool messages.
 * - Gemini: a model turn with `functionCall` parts is followed at once by a user turn with
 *   as many `functionResponse` parts (there are no ids: the agent answers them in order, by
 *   name), and a turn of responses follows a turn of calls.
 */

export type PairingFault =
  /** A call with no result where the provider looks for it. `at` is the message holding the call. */
  | { kind: 'call_without_result'; at: number; ids: string[] }
  /**
   * A result that answers no call of the message before it. `at`, `part`: where the result
   * is. `callsBefore`: how many calls the message before it made (Gemini words "more
   * responses than calls" apart from "responses after no calls").
   */
  | { kind: 'result_without_call'; at: number; part: number; ids: string[]; callsBefore?: number }
  /**
   * Gemini: as many responses as calls, but not answering them in order by name. Gemini
   * itself does not check names; the agent pairs by position and name, so tests do.
   */
  | { kind: 'misnamed_response'; at: number; ids: string[] };

/**
 * Every fault in the body, in message order. A body of any other shape throws: a check that
 * silently finds nothing to pair would pass for every request it cannot read.
 */
export function pairingFaults(body: unknown): PairingFault[] {
  const shape = body as { messages?: unknown; contents?: unknown } | null | undefined;
  if (Array.isArray(shape?.messages)) return faultsInMessages(shape.messages);
  if (Array.isArray(shape?.contents)) return faultsInContents(shape.contents);
  throw new Error(`unpairedToolCalls: not a request body it knows (no messages, no contents): ${String(JSON.stringify(body)).slice(0, 200)}`);
}

/**
 * The calls without a result and the results without a call, for a test to expect none:
 * a call as its id (Gemini, which has no ids: `name@content.part`), a result as
 * `result:` and the id it answers.
 */
export function unpairedToolCalls(body: unknown): string[] {
  return pairingFaults(body).flatMap((fault) => (fault.kind === 'result_without_call' ? fault.ids.map((id) => `result:${id}`) : fault.ids));
}

type Block = { type?: unknown; id?: unknown; tool_use_id?: unknown };
type Message = { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };

const asMessage = (raw: unknown): Message => (typeof raw === 'object' && raw !== null ? (raw as Message) : {});
const blocksOf = (m: Message): Block[] => (Array.isArray(m.content) ? (m.content as unknown[]).map((b) => (typeof b === 'object' && b !== null ? (b as Block) : {})) : []);
const idOf = (value: unknown): string => (typeof value === 'string' ? value : String(value));

/** Anthropic Messages and OpenAI Chat Completions share `messages`; each message is read in its own terms. */
function faultsInMessages(raw: unknown[]): PairingFault[] {
  const messages = raw.map(asMessage);
  const faults: PairingFault[] = [];
  let pending: { at: number; ids: string[]; openai: boolean } | undefined;
  const closePending = () => {
    if (pending && pending.ids.length > 0) faults.push({ kind: 'call_without_result', at: pending.at, ids: pending.ids });
    pending = undefined;
  };

  messages.forEach((m, i) => {
    const previous = messages[i - 1];
    if (m.role === 'tool') {
      // OpenAI: answers a call of the assistant message before this run of tool messages.
      const id = idOf(m.tool_call_id);
      if (pending?.openai && pending.ids.includes(id)) pending.ids = pending.ids.filter((open) => open !== id);
      else faults.push({ kind: 'result_without_call', at: i, part: 0, ids: [id] });
      return;
    }
    const sameTurnAsPrevious = previous !== undefined && previous.role === m.role;
    if (m.role === 'user') {
      // Anthropic: the results answer the calls of the turn before, which ends with this (joined) user turn.
      blocksOf(m).forEach((block, part) => {
        if (block.type !== 'tool_result') return;
        const id = idOf(block.tool_use_id);
        if (pending && !pending.openai && pending.ids.includes(id)) pending.ids = pending.ids.filter((open) => open !== id);
        else faults.push({ kind: 'result_without_call', at: i, part, ids: [id] });
      });
      if (pending && !pending.openai && messages[i + 1]?.role === 'user') return;
      closePending();
      return;
    }
    // An assistant message (or any other role) ends what the messages before it could answer,
    // unless it continues an assistant turn (Anthropic joins consecutive assistant messages).
    if (!(sameTurnAsPrevious && pending && !pending.openai)) closePending();
    if (m.role !== 'assistant') return;
    const anthropicCalls = blocksOf(m).filter((b) => b.type === 'tool_use').map((b) => idOf(b.id));
    const openaiCalls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]).map((c) => idOf((c as { id?: unknown } | null)?.id)) : [];
    if (anthropicCalls.length > 0) {
      if (pending) pending.ids.push(...anthropicCalls);
      else pending = { at: i, ids: anthropicCalls, openai: false };
    } else if (openaiCalls.length > 0) {
      pending = { at: i, ids: openaiCalls, openai: true };
    }
  });
  closePending();
  return faults;
}

type GeminiPart = { functionCall?: { name?: unknown }; functionResponse?: { name?: unknown } };
type GeminiContent = { role?: unknown; parts?: unknown };

const partsOf = (raw: unknown): GeminiPart[] => {
  const content = (typeof raw === 'object' && raw !== null ? raw : {}) as GeminiContent;
  return Array.isArray(content.parts) ? (content.parts as unknown[]).map((p) => (typeof p === 'object' && p !== null ? (p as GeminiPart) : {})) : [];
};
const roleOf = (raw: unknown): unknown => (typeof raw === 'object' && raw !== null ? (raw as GeminiContent).role : undefined);

/** Gemini `contents`: each call is named `name@content.part`, as Gemini has no ids. */
function faultsInContents(contents: unknown[]): PairingFault[] {
  const faults: PairingFault[] = [];
  contents.forEach((raw, i) => {
    const calls = roleOf(raw) === 'model' ? partsOf(raw).flatMap((p, j) => (p.functionCall ? [{ name: idOf(p.functionCall.name ?? ''), at: `${i}.${j}` }] : [])) : [];
    const responses = partsOf(raw).flatMap((p, j) => (p.functionResponse ? [{ name: idOf(p.functionResponse.name ?? ''), part: j }] : []));
    if (responses.length > 0) {
      const before = contents[i - 1];
      const answered = roleOf(before) === 'model' ? partsOf(before).filter((p) => p.functionCall).length : 0;
      const orphans = responses.slice(answered);
      if (orphans.length > 0) {
        faults.push({ kind: 'result_without_call', at: i, part: orphans[0]!.part, ids: orphans.map((r) => `${r.name}@${i}.${r.part}`), callsBefore: answered });
      }
    }
    if (calls.length === 0) return;
    const next = contents[i + 1];
    const answers = roleOf(next) === 'user' ? partsOf(next).flatMap((p) => (p.functionResponse ? [idOf(p.functionResponse.name ?? '')] : [])) : [];
    const missing = calls.slice(answers.length).map((call) => `${call.name}@${call.at}`);
    if (missing.length > 0) faults.push({ kind: 'call_without_result', at: i, ids: missing });
    const misnamed = calls.slice(0, answers.length).filter((call, k) => answers[k] !== call.name).map((call) => `${call.name}@${call.at}`);
    if (misnamed.length > 0) faults.push({ kind: 'misnamed_response', at: i, ids: misnamed });
  });
  return faults;
}
