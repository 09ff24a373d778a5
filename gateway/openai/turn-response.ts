import type { DeltaFrame } from '../../contracts/live-stream';
import type { SessionEvent } from '../../contracts/session-log';
import { spendOf } from '../../contracts/spend';
import type { McpCall, OutputItem, OutputMessage, ResponseObject, ResponseUsage } from './schemas';

/** One event of a streamed response, as the Responses API names it; `sequence_number` is added on the way out. */
export type ResponseStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.failed' | 'response.incomplete'; response: ResponseObject }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem }
  | { type: 'response.content_part.added' | 'response.content_part.done'; item_id: string; output_index: number; content_index: 0; part: OutputMessage['content'][number] }
  | { type: 'response.output_text.delta'; item_id: string; output_index: number; content_index: 0; delta: string; logprobs: [] }
  | { type: 'response.output_text.done'; item_id: string; output_index: number; content_index: 0; text: string; logprobs: [] }
  | { type: 'response.mcp_call.in_progress' | 'response.mcp_call.completed' | 'response.mcp_call.failed'; item_id: string; output_index: number }
  | { type: 'error'; code: string; message: string; param: null };

/** Deltas kept while the log catches up; past it they are dropped, and the log's text completes the message. */
const MAX_HELD_DELTAS = 10_000;

export type SequencedEvent = ResponseStreamEvent & { sequence_number: number };

export interface ResponseMeta {
  id: string;
  /** The agent's name: what the request's `model` named. */
  model: string;
  /** The item ids' prefix, unique to this response. */
  itemPrefix: string;
  previousResponseId: string | null;
  createdAt: number;
}

interface OpenMessage {
  index: number;
  step: number;
  attempt: number;
  /** The text sent as deltas so far. */
  sent: string;
  /** A call wrote other words than those sent: no more deltas, the log's answer ends the message. */
  diverged?: true;
}

/**
 * One turn of a session as a Responses API response, built from what the session's feed
 * delivers: the log's events of the turn (durable, each once and in order) and the live
 * stream's text deltas (best effort). Each step's text is a message item, each tool call
 * an `mcp_call` item; the events come in the API's order, and the final text of each
 * message is the log's, whatever deltas were lost on the way.
 */
export class TurnResponse {
  private readonly output: OutputItem[] = [];
  private readonly events: SessionEvent[] = [];
  private open: OpenMessage | undefined;
  /** Steps whose message is closed: a late delta of one is dropped. */
  private readonly closedSteps = new Set<number>();
  private readonly toolItems = new Map<string, number>();
  /** Steps the log has started: a step's text follows everything the log recorded before it. */
  private readonly startedSteps = new Set<number>();
  /** Deltas of a step the log has not started yet: the live stream outran the log. */
  private held: DeltaFrame[] = [];
  private sequence = 0;
  private status: ResponseObject['status'] = 'in_progress';
  private error: ResponseObject['error'] = null;
  private incomplete: ResponseObject['incomplete_details'] = null;
  private completedAt: number | null = null;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly emit: (event: SequencedEvent) => void = () => undefined,
  ) {}

  get ended(): boolean {
    return this.status !== 'in_progress';
  }

  /** `response.created` and `response.in_progress`: the first two events of every stream. */
  start(): void {
    this.send({ type: 'response.created', response: this.snapshot() });
    this.send({ type: 'response.in_progress', response: this.snapshot() });
  }

  /** Text the model is streaming now. A retry's attempt starts again at offset 0: only what goes beyond the text sent is new. */
  delta(frame: DeltaFrame): void {
    if (this.ended || frame.channel !== 'text' || this.closedSteps.has(frame.step)) return;
    // The live stream can outrun the log (its frames wait for a gap to be read): the text of a
    // step waits for the step's start, so it never comes before the tool results it follows.
    if (!this.startedSteps.has(frame.step)) {
      if (this.held.length < MAX_HELD_DELTAS) this.held.push(frame);
      return;
    }
    if (this.open && (this.open.step !== frame.step || frame.attempt < this.open.attempt)) return;
    const open = this.open ?? this.openMessage(frame.step, frame.attempt);
    open.attempt = frame.attempt;
    const end = frame.offset + frame.text.length;
    // A gap (a lost frame) waits for the log's text rather than send a hole.
    if (open.diverged || frame.offset > open.sent.length) return;
    // Text already sent comes again from a retry or, after a switch to a fallback, from another
    // model (whose attempts count from 1 again): only the same words go on. A call that writes
    // others would make the deltas add up to a text no call wrote; sent text cannot be taken
    // back, so the message waits for the log's answer, which its done event carries.
    const overlap = Math.min(end, open.sent.length) - frame.offset;
    if (frame.text.slice(0, overlap) !== open.sent.slice(frame.offset, frame.offset + overlap)) {
      open.diverged = true;
      return;
    }
    if (end <= open.sent.length) return;
    this.sendText(open, frame.text.slice(open.sent.length - frame.offset));
  }

  /** An event of this turn's log; returns true once the turn has ended. */
  log(event: SessionEvent): boolean {
    if (this.ended) return true;
    this.events.push(event);
    switch (event.type) {
      case 'step/start':
        this.stepStarted(event.step);
        break;
      case 'assistant':
        this.closeMessage(event.step, event.message.text);
        break;
      case 'tool/call':
        this.toolCalled(event);
        break;
      case 'tool/result':
        this.toolFinished(event);
        break;
      case 'turn/end':
        this.finish(event);
        break;
      default:
        break;
    }
    return this.ended;
  }

  /** The stream cannot go on (the session refused the message, Temporal is unreachable): the API's `error` event. */
  fail(code: string, message: string): void {
    this.send({ type: 'error', code, message, param: null });
  }

  snapshot(): ResponseObject {
    return {
      id: this.meta.id,
      object: 'response',
      created_at: this.meta.createdAt,
      completed_at: this.completedAt,
      status: this.status,
      error: this.error,
      incomplete_details: this.incomplete,
      instructions: null,
      metadata: {},
      model: this.meta.model,
      output: structuredClone(this.output),
      parallel_tool_calls: true,
      previous_response_id: this.meta.previousResponseId,
      store: true,
      temperature: null,
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      usage: this.ended ? usageOf(this.events) : null,
    };
  }

  private stepStarted(step: number): void {
    this.startedSteps.add(step);
    const held = this.held;
    this.held = held.filter((frame) => frame.step !== step);
    for (const frame of held) if (frame.step === step) this.delta(frame);
  }

  private openMessage(step: number, attempt: number): OpenMessage {
    const item: OutputMessage = { type: 'message', id: `${this.meta.itemPrefix}_msg_${step}`, role: 'assistant', status: 'in_progress', content: [] };
    const index = this.output.push(item) - 1;
    this.send({ type: 'response.output_item.added', output_index: index, item: structuredClone(item) });
    const part = { type: 'output_text' as const, text: '', annotations: [] };
    item.content.push({ ...part });
    this.send({ type: 'response.content_part.added', item_id: item.id, output_index: index, content_index: 0, part });
    this.open = { index, step, attempt, sent: '' };
    return this.open;
  }

  private sendText(open: OpenMessage, text: string): void {
    if (text === '') return;
    open.sent += text;
    this.send({ type: 'response.output_text.delta', item_id: this.itemId(open.index), output_index: open.index, content_index: 0, delta: text, logprobs: [] });
  }

  /** The step's answer is in the log: its text is the message's, sent as the last delta when the live ones fell short. */
  private closeMessage(step: number, text: string): void {
    if (this.closedSteps.has(step)) return;
    if (!this.open && text === '') return;
    // A step whose answer never came (its frames went astray) ends before the next one opens.
    if (this.open && this.open.step !== step) this.endMessage(this.open, this.open.sent, 'incomplete');
    const open = this.open ?? this.openMessage(step, 1);
    if (text.startsWith(open.sent)) this.sendText(open, text.slice(open.sent.length));
    this.endMessage(open, text, 'completed');
  }

  private endMessage(open: OpenMessage, text: string, status: OutputMessage['status']): void {
    const item = this.output[open.index] as OutputMessage;
    const part = { type: 'output_text' as const, text, annotations: [] };
    item.content[0] = part;
    item.status = status;
    this.send({ type: 'response.output_text.done', item_id: item.id, output_index: open.index, content_index: 0, text, logprobs: [] });
    this.send({ type: 'response.content_part.done', item_id: item.id, output_index: open.index, content_index: 0, part: { ...part } });
    this.send({ type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) });
    this.closedSteps.add(open.step);
    this.open = undefined;
  }

  private toolCalled(event: Extract<SessionEvent, { type: 'tool/call' }>): void {
    const item: McpCall = {
      type: 'mcp_call',
      id: `${this.meta.itemPrefix}_mcp_${event.seq}`,
      server_label: mcpServerOf(event.name) ?? this.meta.model,
      name: event.name,
      arguments: JSON.stringify(event.input),
      status: 'in_progress',
      output: null,
      error: null,
    };
    const index = this.output.push(item) - 1;
    this.toolItems.set(event.callId, index);
    this.send({ type: 'response.output_item.added', output_index: index, item: structuredClone(item) });
    this.send({ type: 'response.mcp_call.in_progress', item_id: item.id, output_index: index });
  }

  private toolFinished(event: Extract<SessionEvent, { type: 'tool/result' }>): void {
    const index = this.toolItems.get(event.callId);
    if (index === undefined) return;
    this.toolItems.delete(event.callId);
    const item = this.output[index] as McpCall;
    const ok = event.code === 'ok';
    item.status = ok ? 'completed' : 'failed';
    item.output = event.content;
    item.error = ok ? null : { type: 'mcp_tool_execution_error', content: `${event.code}: ${event.content}` };
    this.send({ type: ok ? 'response.mcp_call.completed' : 'response.mcp_call.failed', item_id: item.id, output_index: index });
    this.send({ type: 'response.output_item.done', output_index: index, item: structuredClone(item) });
  }

  private finish(event: Extract<SessionEvent, { type: 'turn/end' }>): void {
    // What the turn left open (a cancelled step's text, a call without a result) ends incomplete.
    if (this.open) this.endMessage(this.open, this.open.sent, 'incomplete');
    for (const [callId, index] of this.toolItems) {
      const item = this.output[index] as McpCall;
      item.status = 'incomplete';
      this.send({ type: 'response.output_item.done', output_index: index, item: structuredClone(item) });
      this.toolItems.delete(callId);
    }
    this.completedAt = Math.floor(event.at / 1000);
    if (event.status === 'completed' && event.reason !== 'step_limit') this.status = 'completed';
    else if (event.status === 'completed' || event.status === 'cancelled') {
      this.status = 'incomplete';
      this.incomplete = { reason: event.status === 'cancelled' ? 'cancelled' : 'max_steps' };
    } else {
      this.status = 'failed';
      this.error = { code: event.failure?.type ?? 'unknown', message: event.failure?.message ?? `the turn ended ${event.status}` };
    }
    const type = this.status === 'completed' ? 'response.completed' : this.status === 'failed' ? 'response.failed' : 'response.incomplete';
    this.send({ type, response: this.snapshot() });
  }

  private itemId(index: number): string {
    return (this.output[index] as OutputItem).id;
  }

  private send(event: ResponseStreamEvent): void {
    this.emit({ ...event, sequence_number: this.sequence++ });
  }
}

/** The server of an MCP tool's name, `mcp__<server>__<tool>` (a server's name has no `__`); none for built-in and custom tools. */
function mcpServerOf(name: string): string | undefined {
  return /^mcp__(.+?)__/.exec(name)?.[1];
}

/** The turn's tokens, from its LLM calls as the log records them. */
function usageOf(events: readonly SessionEvent[]): ResponseUsage {
  const spend = spendOf(events);
  return {
    input_tokens: spend.inputTokens,
    input_tokens_details: { cached_tokens: spend.cacheReadTokens },
    output_tokens: spend.outputTokens,
    output_tokens_details: { reasoning_tokens: spend.reasoningTokens },
    total_tokens: spend.inputTokens + spend.outputTokens,
  };
}
