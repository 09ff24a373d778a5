import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { genAiRequestAttributes, genAiResponseAttributes } from '../../contracts/gen-ai-attributes';
import type { AssistantMessage, Message } from '../../contracts/messages';

/**
 * The attempt's span: the span Temporal's activity interceptor opens around each attempt
 * (a child of the call's span). Without tracing there is no active span and every
 * function here returns at once.
 */
export class LlmAttemptSpan {
  readonly #span: Span | undefined;

  constructor(
    private readonly modelRef: string,
    attempt: number,
    /** `AGENT_TRACE_CONTENT=true`: the messages sent and the answer go on the span too. */
    private readonly content: boolean,
  ) {
    const span = trace.getActiveSpan();
    this.#span = span?.isRecording() ? span : undefined;
    this.#span?.setAttributes({ ...genAiRequestAttributes(modelRef), 'agent.llm.attempt': attempt });
  }

  sending(messages: Message[]): void {
    if (this.content) this.#span?.setAttribute('gen_ai.input.messages', JSON.stringify(messages));
  }

  answered(message: AssistantMessage): void {
    this.#span?.setAttributes(genAiResponseAttributes(this.modelRef, message));
    if (this.content) this.#span?.setAttribute('gen_ai.output.messages', JSON.stringify({ text: message.text, toolCalls: message.toolCalls }));
  }

  /** A classified provider failure: its stable type, and the wait the provider stated, if any. */
  failed(type: string, message: string, retryAfterMs: number | undefined): void {
    this.#span?.setAttributes({ 'error.type': type, ...(retryAfterMs === undefined ? {} : { 'agent.llm.retry_after_ms': retryAfterMs }) });
    this.#span?.setStatus({ code: SpanStatusCode.ERROR, message });
  }
}
