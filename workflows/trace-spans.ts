import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { ApplicationFailure, getRandomStream } from '@temporalio/workflow';
import type { SpanAttributes } from '../contracts/gen-ai-attributes';
import type { ScheduledCall } from './scheduler';

/**
 * The spans a session adds to the trace of each message: the turn, its steps, its tool
 * calls. They use the tracer Temporal's OpenTelemetry workflow interceptor registers in the
 * sandbox; a worker without tracing has none, and every call here is a no-op. Times come
 * from the workflow clock, and the interceptor's sink exports nothing while replaying.
 * Nothing in the session's commands depends on them: history is the same with or without.
 */
const tracer = () => trace.getTracer('durable-agent-session');

/**
 * Span ids are drawn from the sandbox's random source. Its main stream is also drawn by the
 * spans of Queries and Update validators, which run live but not on replay, so ids drawn
 * from it would differ on replay and a turn's tree would fall apart after a worker restart.
 * A turn therefore runs on a stream of its own, seeded by the run: its spans, and the
 * interceptor's activity spans opened inside it, get the same ids live and on replay.
 */
function withTraceIds<T>(fn: () => T): T {
  return getRandomStream('durable-agent-trace-ids').with(fn);
}

export function currentTraceContext(): Context {
  return context.active();
}

/**
 * The client's span of the `send` Update, the parent of the Update handler's span. The
 * turn hangs under the client's span rather than the handler's: the handler's span id is
 * drawn from the run's main random stream, which the spans of Queries and Update
 * validators also draw from live but never on replay, so that id can differ on replay.
 */
function requesterContext(): Context {
  const handler = trace.getSpan(context.active());
  const parentSpanId = (handler as { parentSpanId?: string } | undefined)?.parentSpanId;
  if (!handler || parentSpanId === undefined) return context.active();
  return trace.setSpanContext(ROOT_CONTEXT, { ...handler.spanContext(), spanId: parentSpanId, isRemote: true });
}

/**
 * Runs `fn` inside a span that ends when it settles, with `describe`'s attributes of the
 * result; a rejection marks the span as an error.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes, parent: Context, fn: () => Promise<T>, describe?: (result: T) => SpanAttributes): Promise<T> {
  return withTraceIds(() =>
    tracer().startActiveSpan(name, { attributes }, parent, async (span) => {
      try {
        const result = await fn();
        if (describe) span.setAttributes(describe(result));
        return result;
      } catch (error) {
        span.setAttribute('error.type', failureType(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    }),
  );
}

/**
 * The failure's type from the catalogue (`auth_error`, `turn_timeout`, …): the first
 * ApplicationFailure type along the causes (an activity's failure is the cause of the
 * ActivityFailure the workflow sees), else the error's name. A worker whose payloads are
 * encrypted exports this in place of the message (worker/tracing-redaction.ts).
 */
function failureType(error: unknown): string {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof ApplicationFailure && e.type) return e.type;
  return error instanceof Error ? error.name : 'Error';
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
    return withTraceIds(() => context.with(trace.setSpan(context.active(), span), run));
  }

  /** The call's result is recorded: its span ends with the result code. */
  result(callId: string, name: string, code: ToolResultCode): void {
    const open = this.#open.get(callId) ?? { span: this.#start(callId, name), startedAt: Date.now() };
    this.#open.delete(callId);
    open.span.setAttributes({ 'agent.tool.result_code': code, 'agent.tool.duration_ms': Date.now() - open.startedAt });
    if (code !== 'ok') {
      open.span.setAttribute('error.type', code);
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    }
    open.span.end();
  }

  #start(callId: string, name: string): Span {
    // A call answered without running (invalid arguments, an unknown tool) has no lane.
    const lane = this.#lanes.get(callId);
    return withTraceIds(() =>
      tracer().startSpan(`tool ${name}`, {
        attributes: { 'agent.tool.name': name, 'agent.tool.call_id': callId, ...(lane ? { 'agent.tool.lane': lane } : {}) },
      }),
    );
  }
}

/**
 * Each turn's span is a child of the client's `send` that asked for it, though the turn
 * runs in the session's main loop: the trace context is kept until its turn starts. A turn
 * that came with the session's start has the session's own span as its parent.
 */
export class TurnTraces {
  readonly #requestedBy = new Map<number, Context>();

  /** Called in the `send` handler, inside its span. */
  requested(turn: number): void {
    this.#requestedBy.set(turn, requesterContext());
  }

  run<T>(turn: number, fn: () => Promise<T>): Promise<T> {
    const parent = this.#requestedBy.get(turn) ?? currentTraceContext();
    this.#requestedBy.delete(turn);
    return inSpan(`turn ${turn}`, { 'agent.turn': turn }, parent, fn);
  }
}
