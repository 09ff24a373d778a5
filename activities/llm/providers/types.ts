import type { Dispatcher } from 'undici';
import type { PostStreamOptions } from '../http';
import type { AssistantMessage, LlmRequest } from '../../../contracts/messages';

export interface ProviderCall {
  /** Injected HTTP: the worker's pooled Agent in production, a local server in tests. */
  dispatcher: Dispatcher;
  /** Without a trailing slash or with one; e.g. `https://api.anthropic.com`, `https://api.openai.com/v1`, `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Read by the worker from its environment. `undefined` for servers that need none (Ollama). */
  apiKey: string | undefined;
  /** The activity's cancellation: aborting it closes the request and throws `LlmAbortError`. */
  signal: AbortSignal;
  /** The longest silence tolerated on the connection; see `postStream`. */
  idleTimeoutMs: number;
  /** Called as bytes arrive (pings included) and as the answer grows, so the activity can heartbeat. */
  onProgress?: (p: StreamProgress) => void;
  /** Awaited with the request's body just before it leaves; see `postStream`. */
  beforeRequest?: PostStreamOptions['beforeRequest'];
  /** The response's status and headers as soon as they are in; see `postStream`. */
  onResponse?: PostStreamOptions['onResponse'];
}

export interface StreamProgress {
  /** Body bytes received so far, keep-alive pings included. */
  bytes: number;
  /** The assistant text accumulated so far. */
  text: string;
  /** The model's visible thinking so far (Anthropic thinking blocks, Gemini thought summaries). */
  thinking: string;
  /** Tool calls started so far. */
  toolCalls: number;
}

/**
 * One attempt of one LLM call: resolves with the complete assistant message, or throws an
 * `LlmError` (typed, retryable or not) or an `LlmAbortError`. Never retries.
 */
export type ProviderStream = (request: LlmRequest, call: ProviderCall) => Promise<AssistantMessage>;
