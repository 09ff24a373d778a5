import type { GeminiPartRef, Message } from '../../../contracts/messages';

type AssistantMessage = Extract<Message, { role: 'assistant' }>;

export type GeminiPart =
  | { text: string; thought?: true; thoughtSignature?: string }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

/**
 * The parts of a streamed Gemini reply, in order, as the next request must send them
 * back. Gemini 3 signs its reasoning: a `thoughtSignature` rides on a function call (only
 * the first of parallel calls), on a thought, or on an empty text part at the very end,
 * and the API rejects a function call that comes back without its signature. So a part
 * that carries a signature stays a part of its own, exactly where it was; unsigned answer
 * text is merged, as a stream splits it at arbitrary points.
 */
export class GeminiPartRecorder {
  readonly refs: GeminiPartRef[] = [];

  text(text: string, thoughtSignature: string | undefined): void {
    // An empty unsigned part carries nothing, and an empty text part in a request is an error.
    if (text === '' && thoughtSignature === undefined) return;
    const last = this.refs[this.refs.length - 1];
    if (thoughtSignature === undefined && last?.type === 'text' && last.thoughtSignature === undefined) last.chars += text.length;
    else this.refs.push({ type: 'text', chars: text.length, ...signed(thoughtSignature) });
  }

  thought(text: string, thoughtSignature: string | undefined): void {
    const last = this.refs[this.refs.length - 1];
    if (thoughtSignature === undefined && last?.type === 'thought' && last.thoughtSignature === undefined) last.text += text;
    else this.refs.push({ type: 'thought', text, ...signed(thoughtSignature) });
  }

  call(index: number, thoughtSignature: string | undefined): void {
    this.refs.push({ type: 'call', index, ...signed(thoughtSignature) });
  }

  /** Worth keeping only when it holds something the plain message does not: a signature or a thought. */
  get needed(): boolean {
    return this.refs.some((r) => r.thoughtSignature !== undefined || r.type === 'thought');
  }
}

function signed(thoughtSignature: string | undefined): { thoughtSignature?: string } {
  return thoughtSignature === undefined ? {} : { thoughtSignature };
}

/** The model turn of an assistant message: its recorded parts when it has them, else text then calls. */
export function modelParts(m: AssistantMessage): GeminiPart[] {
  const call = (i: number) => ({ functionCall: { name: m.toolCalls[i]!.name, args: m.toolCalls[i]!.input } });
  if (m.providerData?.provider !== 'google') {
    return [...(m.text ? [{ text: m.text }] : []), ...m.toolCalls.map((_, i) => call(i))];
  }
  const parts: GeminiPart[] = [];
  let at = 0;
  for (const ref of m.providerData.parts) {
    const signature = signed(ref.thoughtSignature);
    if (ref.type === 'text') {
      parts.push({ text: m.text.slice(at, at + ref.chars), ...signature });
      at += ref.chars;
    } else if (ref.type === 'thought') {
      parts.push({ text: ref.text, thought: true, ...signature });
    } else {
      parts.push({ ...call(ref.index), ...signature });
    }
  }
  return parts;
}
