import { createHmac } from 'node:crypto';
import { sortedKeys } from '../../../activities/llm/providers/stable-tools';

/**
 * The scripted LLM's stand-in for the signatures real providers put on a model's
 * reasoning: Anthropic's thinking-block `signature`, Gemini 3's `thoughtSignature`. Like
 * the real ones they are opaque to the client and checked by the server when they come
 * back, so a client that drops or alters them is refused here as it would be there.
 * A fixed key, so a restarted scripted LLM still accepts what an earlier one signed.
 */
const KEY = 'scripted-llm reasoning signatures';

export type SignedKind = 'thinking' | 'functionCall';

export function sign(kind: SignedKind, content: string): string {
  return createHmac('sha256', KEY).update(`${kind}\0${content}`).digest('base64');
}

export function verify(kind: SignedKind, content: string, signature: unknown): boolean {
  return typeof signature === 'string' && signature === sign(kind, content);
}

/** A function call as signed: its name and its arguments in one key order, whatever order they come back in. */
export function functionCallContent(name: unknown, args: unknown): string {
  return `${String(name)}\0${JSON.stringify(sortedKeys(args ?? {}))}`;
}
