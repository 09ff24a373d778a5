import type { OutgoingHttpHeaders } from 'node:http';
import type { PairingFault } from '../pairing';
import type { ScriptedStopReason } from '../script';
import type { Frame } from '../sse';
import type { RequestedOutput } from './structured-output';

export type Provider = 'anthropic' | 'openai' | 'google';

/** A reply's content in neutral terms, already cut into the pieces that become frames. */
export interface StreamPlan {
  /** The model the request named. */
  model: string;
  /** The model the stream names as the one that answered. */
  answeredBy: string;
  textPieces: string[];
  /** The reasoning to stream first, when the request turns thinking on. */
  thinking: string;
  calls: PlannedCall[];
  stopReason: ScriptedStopReason;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number; reasoningTokens?: number };
  /** Set when the model declines: the text pieces are the refusal, and Gemini blocks the prompt for this reason. */
  refusal?: { blockReason: string };
  /** Set for a `json` reply: the text pieces are its JSON, which Anthropic sends as a call of the answer tool when the request offers it. */
  json?: true;
  /** False for a stream that must end without its terminal sentinel (and without a stop reason). */
  complete: boolean;
}

export interface PlannedCall {
  id?: string;
  name: string;
  /** The argument text, in at least two pieces when it has two characters or more. */
  argPieces: string[];
  /** The arguments as a value, for Gemini, which sends them as an object in one part. */
  args: unknown;
}

/** The fields a script may set on an error body; each dialect maps them to its own shape. */
export interface ErrorShape {
  errorType?: string;
  message?: string;
  code?: string;
}

/** A context-overflow error as the provider sends it: its HTTP status and the fields of its error body. */
export interface ContextOverflow extends ErrorShape {
  status: number;
}

/** An HTTP error status with the provider's whole error body. */
export interface ProviderError {
  status: number;
  body: unknown;
}

/** Where a provider's request goes, read from the method and the URL alone. */
export interface RouteMatch {
  /** The model when the URL names it (Gemini); otherwise it is read from the body. */
  model?: string;
}

/** One provider's wire format, both directions. */
export interface Dialect {
  provider: Provider;
  /** Line ending of the SSE frames. */
  eol: string;
  match(method: string, url: URL): RouteMatch | null;
  /** Why the scripted server cannot serve this request (e.g. not streaming), or null. */
  problem(body: Record<string, unknown>, url: URL): string | null;
  modelFromBody(body: Record<string, unknown>): string | undefined;
  /** The text of the last user message, for echo models. */
  lastUserText(body: Record<string, unknown>): string;
  /**
   * The text of the last text part of the request's last message when that message is the
   * user's, else undefined: where a compaction request puts its instruction (a provider
   * that merges consecutive user turns puts it after the turn's other text).
   */
  finalUserText(body: Record<string, unknown>): string | undefined;
  /** The structured output the request asks for (wire/structured-output.ts), or undefined for free text. */
  requestedOutput(body: Record<string, unknown>): RequestedOutput | undefined;
  /** How many messages (Gemini: contents) the request holds. */
  messageCount(body: Record<string, unknown>): number;
  /** The provider's own refusal of a request of `tokens` for a model whose window is `window` tokens. */
  contextOverflow(tokens: number, window: number): ContextOverflow;
  /** The provider's own 400 for a request with the first of these pairing faults (pairing.ts). */
  unpaired(fault: PairingFault): ProviderError;
  streamHeaders(): OutgoingHttpHeaders;
  /** The frames of a reply. The body is passed for what it asks of the stream (OpenAI's `include_usage`). */
  frames(plan: StreamPlan, body: Record<string, unknown>): Frame[];
  /** The in-stream error frame. */
  streamError(shape: ErrorShape): Frame;
  /** A data frame that is not valid JSON. */
  malformed(): Frame;
  /** The keep-alive frame sent during a stall. */
  ping(): Frame;
  /** The JSON error body for an HTTP status. */
  errorBody(status: number, shape: ErrorShape): unknown;
}
