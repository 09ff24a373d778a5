import { context, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { SpanAttributes } from './gen-ai-attributes';
import type { ScheduledCall } from './scheduler';

/**
 * The spans a session adds to the trace of each message: the turn, its steps, its tool
 * calls. They use the tracer Temporal's OpenTelemetry workflow interceptor registers in the
 * sandbox; a worker without tracing has none, and every call here is a no-op. Span ids
 * come from the sandbox's seeded random source and times from the workflow clock, so a
 * replay makes the same spans, and the interceptor's sink exports none while replaying.
 * Nothing in the session's commands depends on them: history is the same with or without.
 */
const tracer = () => trace.getTracer('durable-agent-session');

/** The trace context of the `send` Update that asked for a turn: the turn's span is its child. */
export function currentTraceContext(): Context {
  return context.active();
}

/**
 * Runs `fn` inside a span that ends when it settles, with `describe`'s attributes of the
 * result; a rejection marks the span as an error.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes, parent: Context, fn: () => Promise<T>, describe?: (result: T) => SpanAttributes): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      const result = await fn();
      if (describe) span.setAttributes(describe(result));
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

export type ToolResultCode = 'ok' | 'error' | 'TOOL_OUTCOME_UNKNOWN' | 'TOOL_NOT_STARTED';

/**
 * One span per tool call of a step, open from dispatch until its result is recorded,
 * so a compensation result (`TOOL_OUTCOME_UNKNOWN`) closes the span of the call it answers;
 * a call never dispatched (`TOOL_NOT_STARTED`) gets a span of no duration.
 */
export class ToolSpans {
  readonly #open = new Map<string, { span: Span; startedAt: number }>();
  readonly #lanes: Map<string, string>;

  constructor(scheduled: ScheduledCall[]) {
    this.#lanes = new Map(scheduled.flatMap((entry) => (entry.kind === 'dispatch' ? [[entry.call.id, entry.toolClass]] : [])));
  }

  /** Runs the dispatch inside the call's span, so the activity's spans are its children. */
  dispatch<T>(callId: string, name: string, run: () => Promise<T>): Promise<T> {
    const span = this.#start(callId, name);
    this.#open.set(callId, { span, startedAt: Date.now() });
    return context.with(trace.setSpan(context.active(), span), run);
  }

  /** The call's result is recorded: its span ends with the result code. */
  result(callId: string, name: string, code: ToolResultCode): void {
    const open = this.#open.get(callId) ?? { span: this.#start(callId, name), startedAt: Date.now() };
    this.#open.delete(callId);
    open.span.setAttributes({ 'agent.tool.result_code': code, 'agent.tool.duration_ms': Date.now() - open.startedAt });
    if (code !== 'ok') open.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    open.span.end();
  }

  #start(callId: string, name: string): Span {
    // A call answered without running (invalid arguments, an unknown tool) has no lane.
    const lane = this.#lanes.get(callId);
    return tracer().startSpan(`tool ${name}`, {
      attributes: { 'agent.tool.name': name, 'agent.tool.call_id': callId, ...(lane ? { 'agent.tool.lane': lane } : {}) },
    });
  }
}

/**
 * Each turn's span is a child of the `send` Update that asked for it, though the turn runs
 * in the session's main loop: the Update's trace context is kept until its turn starts.
 * A turn that came with the session's start has the session's own span as its parent.
 */
export class TurnTraces {
  readonly #requestedBy = new Map<number, Context>();

  /** Called in the `send` handler, inside its span. */
  requested(turn: number): void {
    this.#requestedBy.set(turn, currentTraceContext());
  }

  run<T>(turn: number, fn: () => Promise<T>): Promise<T> {
    const parent = this.#requestedBy.get(turn) ?? currentTraceContext();
    this.#requestedBy.delete(turn);
    return inSpan(`turn ${turn}`, { 'agent.turn': turn }, parent, fn);
  }
}
