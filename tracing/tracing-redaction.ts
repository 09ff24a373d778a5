import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * With payload encryption on, history holds failure messages as ciphertext, but a failed
 * span would carry them to the collector in plain text: in its status message and in the
 * `exception` event the SDKs record (message and stack trace). A provider's or a tool's
 * error text can quote the conversation, so such a worker or client sends, in their place,
 * only the failure's type: the span's `error.type` (`auth_error`, `TOOL_OUTCOME_UNKNOWN`, …),
 * else the exception's type. The collector still sees which span failed and why, by kind.
 *
 * A processor in front of the exporting one, so it covers every span the process exports:
 * its own, Temporal's interceptors', and the workflow spans the sandbox's sink hands over.
 */
export function withoutFailureMessages(next: SpanProcessor): SpanProcessor {
  return {
    onStart: (span: Span, parent: Context) => next.onStart(span, parent),
    onEnd: (span: ReadableSpan) => next.onEnd(redacted(span)),
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
  };
}

const EXCEPTION_TYPE = 'exception.type';

function redacted(span: ReadableSpan): ReadableSpan {
  const exceptions = span.events.filter((event) => event.name === 'exception');
  if (span.status.message === undefined && exceptions.length === 0) return span;
  const errorType = span.attributes['error.type'];
  const exceptionType = exceptions.map((event) => event.attributes?.[EXCEPTION_TYPE]).find((type) => type !== undefined);
  const type = errorType ?? exceptionType;
  const status = { code: span.status.code, ...(type === undefined ? {} : { message: String(type) }) };
  const events = span.events.map((event): TimedEvent => (event.name === 'exception' ? withTypeOnly(event) : event));
  // A view over the span, not a copy: the exporter reads the rest (ids, times, attributes) from it as it is.
  return Object.create(span, { status: { value: status }, events: { value: events } }) as ReadableSpan;
}

function withTypeOnly(event: TimedEvent): TimedEvent {
  const type = event.attributes?.[EXCEPTION_TYPE];
  return { name: event.name, time: event.time, ...(type === undefined ? {} : { attributes: { [EXCEPTION_TYPE]: type } }) };
}
