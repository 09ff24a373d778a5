import { requestTokens } from './context-window';
import type { ScriptedReply, ScriptedToolCall } from './script';
import type { PlannedCall, StreamPlan } from './wire/dialect';

/** Turns a streaming reply into neutral content cut into frame-sized pieces. */

const DEFAULT_CHUNK_SIZE = 8;
const DEFAULT_THINKING = 'Let me think this through before I answer.';

/** About one token per four characters: close enough for usage fields that must be plausible, not exact. */
function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** At least two pieces whenever possible, so every tool call exercises the client's reassembly. */
function argumentPieces(text: string, size: number): string[] {
  return pieces(text, Math.max(1, Math.min(size, Math.ceil(text.length / 2))));
}

function planCall(call: ScriptedToolCall, chunkSize: number): PlannedCall {
  const text = call.rawArguments ?? JSON.stringify(call.input ?? {});
  let args: unknown = call.input ?? {};
  if (call.rawArguments !== undefined) {
    try {
      args = JSON.parse(call.rawArguments);
    } catch {
      args = call.rawArguments;
    }
  }
  return { ...(call.id === undefined ? {} : { id: call.id }), name: call.name, argPieces: argumentPieces(text, chunkSize), args };
}

type StreamingReply = Exclude<ScriptedReply, { kind: 'status' } | { kind: 'context_overflow' }>;

export function planReply(reply: StreamingReply, model: string, requestBody: unknown): StreamPlan {
  const chunkSize = ('chunkSize' in reply ? reply.chunkSize : undefined) ?? DEFAULT_CHUNK_SIZE;
  let text = '';
  let calls: PlannedCall[] = [];
  switch (reply.kind) {
    case 'text':
      text = reply.text;
      break;
    case 'tool_calls':
      text = reply.text ?? '';
      calls = reply.calls.map((call) => planCall(call, chunkSize));
      break;
    case 'json':
      text = JSON.stringify(reply.value);
      break;
    case 'malformed':
      text = reply.text ?? 'ok';
      break;
    case 'refusal':
      text = reply.text ?? "I can't help with that.";
      break;
    case 'truncate':
    case 'stream_error':
    case 'reset':
      text = reply.text ?? '';
      break;
    case 'empty':
      break;
  }
  const outputChars = text.length + calls.reduce((sum, call) => sum + call.name.length + call.argPieces.join('').length, 0);
  const defaultStop = reply.kind === 'tool_calls' ? 'tool_use' : 'end_turn';
  return {
    model,
    answeredBy: reply.answeredBy ?? model,
    textPieces: pieces(text, chunkSize),
    thinking: ('thinking' in reply ? reply.thinking : undefined) ?? DEFAULT_THINKING,
    calls,
    stopReason: ('stopReason' in reply ? reply.stopReason : undefined) ?? defaultStop,
    usage: reply.usage ?? {
      // The size the context window is checked against, so the two never disagree.
      inputTokens: requestTokens(requestBody),
      outputTokens: estimateTokens(outputChars),
    },
    ...(reply.kind === 'refusal' ? { refusal: { blockReason: reply.blockReason ?? 'SAFETY' } } : {}),
    ...(reply.kind === 'json' ? { json: true } : {}),
    complete:
      reply.kind === 'refusal' || reply.kind === 'text' || reply.kind === 'tool_calls' || reply.kind === 'json' || reply.kind === 'empty' || reply.kind === 'malformed',
  };
}
