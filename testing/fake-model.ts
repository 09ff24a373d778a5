import type { ProviderId } from '../contracts/model-ref';
import { startScriptedLlm, type RecordedRequest, type ScriptedLlm } from './scripted-llm/server';
import type { ScriptedJsonValue, ScriptedReply } from './scripted-llm/script';

/**
 * The fake model of `durable-agent-worker/testing` (docs/testing.md): the scripted LLM,
 * a local HTTP server that speaks the real streaming wire formats of Anthropic, OpenAI and
 * Gemini, scripted with a few builders. A worker pointed at it (`providerEnv()`) runs its
 * real LLM activity, ladder and adapters against it, so a user's test proves what the real
 * providers would see, without a key or a network.
 *
 * Its replies are one conversation, whatever model a request names: each request takes the
 * next reply, so a test scripts what the model says, not which model says it. A request
 * with no reply left is refused with a 400 naming the model, loudly, rather than answered
 * with something the test never asked for.
 */
export interface FakeModel {
  /** `http://127.0.0.1:PORT`: the base URL of all three providers. */
  readonly url: string;
  /** A model ref that reaches the fake in the provider's wire format, e.g. `openai:fake-model`. */
  ref(provider?: ProviderId): string;
  /** The variables a worker needs to call the fake for every provider: base URLs and API keys. */
  providerEnv(): FakeProviderEnv;
  /** Queues replies, played one per request in the order given. */
  reply(...replies: FakeReply[]): void;
  /** Replies queued and not played yet: 0 once the conversation went as scripted. */
  pending(): number;
  /** The requests received so far, oldest first, as sent (body, headers, provider, model) and how each was answered. */
  requests(): FakeModelRequest[];
  /** Resolves with every request once there are at least `n`; rejects after `timeoutMs` (default 10 000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<FakeModelRequest[]>;
  /** Ends the requests in flight and stops listening. */
  close(): Promise<void>;
}

/** One scripted answer: made by `text`, `json`, `toolCall`, `toolCalls`, `overloaded`, `truncated` or `stall`. */
export type FakeReply = Readonly<ScriptedReply>;

export type FakeModelRequest = RecordedRequest;

export interface FakeProviderEnv {
  ANTHROPIC_BASE_URL: string;
  ANTHROPIC_API_KEY: string;
  OPENAI_BASE_URL: string;
  OPENAI_API_KEY: string;
  GEMINI_BASE_URL: string;
  GEMINI_API_KEY: string;
}

export interface FakeToolCall {
  name: string;
  /** The call's arguments. Default `{}`. */
  input?: Record<string, unknown>;
  /** The provider's call id. Default: a fresh one in the provider's shape (Gemini sends none). */
  id?: string;
}

/** The model name `ref` uses; any other name reaches the same replies. */
const FAKE_MODEL_NAME = 'fake-model';
/** The queue every request falls back on (scripted-llm's `anyModel`). */
const CONVERSATION = '*';

export async function startFakeModel(): Promise<FakeModel> {
  const llm: ScriptedLlm = await startScriptedLlm({ demo: false, anyModel: CONVERSATION });
  return {
    url: llm.url,
    ref: (provider = 'anthropic') => `${provider}:${FAKE_MODEL_NAME}`,
    providerEnv: () => ({
      ANTHROPIC_BASE_URL: llm.url,
      ANTHROPIC_API_KEY: 'fake-anthropic-key',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'fake-openai-key',
      GEMINI_BASE_URL: llm.url,
      GEMINI_API_KEY: 'fake-gemini-key',
    }),
    reply: (...replies) => llm.script(CONVERSATION, ...replies),
    pending: () => llm.pending(CONVERSATION),
    requests: () => llm.requests(),
    waitForRequests: (n, timeoutMs) => llm.waitForRequests(n, undefined, timeoutMs),
    close: () => llm.close(),
  };
}

/** The model answers with text and ends its turn. */
export function text(answer: string): FakeReply {
  return { kind: 'text', text: answer };
}

/**
 * The model gives a structured answer, e.g. `json({ id: 7, status: 'shipped' })`, in the
 * form the request asked for it: the JSON as the answer's text for OpenAI and Gemini, a
 * call of the `final_answer` tool for Anthropic. Whether it matches the turn's schema is
 * the test's choice: a wrong one is sent back to be repaired.
 */
export function json(value: ScriptedJsonValue): FakeReply {
  return { kind: 'json', value };
}

/** The model asks for one tool call, e.g. `toolCall('lookup_order', { id: 7 })`. */
export function toolCall(name: string, input: Record<string, unknown> = {}): FakeReply {
  return toolCalls({ name, input });
}

/** The model asks for several tool calls in one answer, in this order. */
export function toolCalls(...calls: FakeToolCall[]): FakeReply {
  return { kind: 'tool_calls', calls: calls.map((call) => ({ ...call })) };
}

/**
 * The provider is overloaded: an HTTP 529 (Anthropic's overloaded status), with a
 * `Retry-After` of `retryAfterS` seconds when given, which the worker's retry ladder waits
 * out before it asks again.
 */
export function overloaded(options: { retryAfterS?: number } = {}): FakeReply {
  const headers = options.retryAfterS === undefined ? undefined : { 'retry-after': String(options.retryAfterS) };
  return { kind: 'status', status: 529, ...(headers ? { headers } : {}) };
}

/** The stream ends cleanly after `partial` but without its end frame, as a dropped proxy leaves it. */
export function truncated(partial = 'I was about to'): FakeReply {
  return { kind: 'truncate', text: partial };
}

/**
 * `reply`, paused for `ms` in silence after its first frame of content (`-1`: until the
 * worker gives up): a stream longer silent than the worker's `AGENT_LLM_IDLE_TIMEOUT_MS`
 * is abandoned and asked again. A reply that fits in one frame (Gemini ends its last frame
 * with the finish reason) has nothing left to pause before.
 */
export function stall(ms: number, reply: FakeReply = text('An answer long enough to stream in several frames.')): FakeReply {
  return { ...reply, stall: { ms } };
}
