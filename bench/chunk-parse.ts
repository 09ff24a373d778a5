/**
 * What reading a provider's chunks through its zod schema costs, against the hand-written
 * `isPlainObject` guards the adapters had before (2026-12-01), on every stream recorded
 * from the real APIs (`../shared/real-streams/fixtures`), in the same run:
 *
 *   node bin/launch.js bench/chunk-parse.ts
 *
 * Each frame is JSON-parsed once beforehand (both ways parse it, so it is left out), then
 * read and reduced to the answer, the old way and the new way in alternating blocks. The
 * two must agree on every stream, or the run fails: the old way is kept here, and only
 * here, as the reference of that check and of the timing. It prints the cost per chunk of
 * each, their ratio, and what the difference adds to a step (bench/README.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { classifyStreamError } from '../activities/llm/classify';
import { LlmError } from '../activities/llm/llm-error';
import { anthropicEvent, AnthropicReply } from '../activities/llm/providers/anthropic-chunks';
import { isPlainObject, tokenCount, toolInputFromText, toolInputFromValue } from '../activities/llm/providers/assistant-message';
import { ownEntry } from '../activities/llm/providers/event-stream';
import { geminiChunk, GeminiReply } from '../activities/llm/providers/gemini-chunks';
import { GeminiPartRecorder } from '../activities/llm/providers/gemini-parts';
import { openAiChunk, OpenAiReply } from '../activities/llm/providers/openai-chunks';
import { ProgressTracker } from '../activities/llm/providers/progress';
import type { AnthropicThinkingBlock, StopReason, ToolCall, Usage } from '../contracts/messages';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { median } from './stats';

const FIXTURES = path.resolve(PROJECT_ROOT, '../shared/real-streams/fixtures');
const ENDPOINT = 'POST /bench';
/** A step of the benchmark's loop (bench/README.md, 2026-12-01): its p50, and the worker's CPU in it. */
const STEP_P50_MS = 19;
const WORKER_CPU_PER_STEP_MS = 12.9;
const BLOCKS = 11;
const BLOCK_MS = 150;

type Provider = 'anthropic' | 'openai' | 'google';
type Frames = readonly unknown[];
/** What a stream came to, comparable between the two ways (generated ids made stable). */
type Outcome = Record<string, unknown>;
type Reader = (frames: Frames) => Outcome;

interface Stream {
  name: string;
  provider: Provider;
  frames: Frames;
}

// ---- the new way: the adapters' schemas and reducers ----

const schemaReaders: Record<Provider, Reader> = {
  openai: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const reply = new OpenAiReply(progress);
      for (const frame of frames) {
        const chunk = openAiChunk.parse(frame);
        if (chunk == null) continue;
        if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError('openai', frame, ENDPOINT);
        reply.take(chunk);
      }
      return { text: progress.text, thinking: progress.thinking, toolCalls: reply.toolCalls, stopReason: reply.stopReason, usage: reply.usage, model: reply.responseModel, finished: reply.finished };
    }),
  anthropic: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const reply = new AnthropicReply(progress);
      for (const frame of frames) {
        const event = anthropicEvent.parse(frame);
        if (event?.type === 'error') throw classifyStreamError('anthropic', frame, ENDPOINT);
        if (event != null) reply.take(event);
        if (reply.stopped) break;
      }
      const { toolCalls, thinkingBlocks, usage, stopReason, responseModel, stopped } = reply;
      return { text: progress.text, thinking: progress.thinking, toolCalls, stopReason, usage, model: responseModel, finished: stopped, blocks: thinkingBlocks };
    }),
  google: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const reply = new GeminiReply(progress, ENDPOINT);
      for (const frame of frames) {
        const chunk = geminiChunk.parse(frame);
        if (chunk == null) continue;
        if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError('google', frame, ENDPOINT);
        reply.take(chunk);
      }
      const { toolCalls, stopReason, usage, responseModel, finished, parts } = reply;
      return { text: progress.text, thinking: progress.thinking, toolCalls, stopReason, usage, model: responseModel, finished, parts: parts.refs };
    }),
};

// ---- the old way: the guards as the adapters had them, each adapter's loop body ----

const guardReaders: Record<Provider, Reader> = {
  openai: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const slots = new Map<string, { id: string; name: string; args: string }>();
      let usage: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
      let stopReason: StopReason = 'end_turn';
      let responseModel: string | undefined;
      let refused = false;
      let sawFinish = false;
      for (const chunk of frames) {
        if (!isPlainObject(chunk)) continue;
        if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError('openai', chunk, ENDPOINT);
        if (isPlainObject(chunk.usage)) {
          const u = chunk.usage;
          const prompt = isPlainObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
          const completion = isPlainObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
          usage = { inputTokens: tokenCount(u.prompt_tokens), outputTokens: tokenCount(u.completion_tokens), cacheReadTokens: tokenCount(prompt.cached_tokens), cacheWriteTokens: 0, reasoningTokens: tokenCount(completion.reasoning_tokens) };
        }
        responseModel = oldModelName(chunk.model) ?? responseModel;
        const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => isPlainObject(c) && (c.index ?? 0) === 0) : undefined;
        if (!isPlainObject(choice)) continue;
        const delta = isPlainObject(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string') progress.appendText(delta.content);
        if (typeof delta.reasoning_content === 'string') progress.appendThinking(delta.reasoning_content);
        if (typeof delta.refusal === 'string' && delta.refusal !== '') {
          refused = true;
          progress.appendText(delta.refusal);
        }
        if (Array.isArray(delta.tool_calls)) {
          delta.tool_calls.forEach((tc, position) => {
            if (!isPlainObject(tc)) return;
            const key = typeof tc.index === 'number' ? `index:${tc.index}` : typeof tc.id === 'string' && tc.id ? `id:${tc.id}` : `position:${position}`;
            let slot = slots.get(key);
            if (!slot) {
              slot = { id: '', name: '', args: '' };
              slots.set(key, slot);
              progress.toolCallStarted();
            }
            if (!slot.id && typeof tc.id === 'string') slot.id = tc.id;
            const fn = isPlainObject(tc.function) ? tc.function : {};
            if (!slot.name && typeof fn.name === 'string') slot.name = fn.name;
            if (typeof fn.arguments === 'string') slot.args += fn.arguments;
            else if (isPlainObject(fn.arguments)) slot.args = JSON.stringify(fn.arguments);
          });
        }
        if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
          sawFinish = true;
          stopReason = ownEntry(OPENAI_FINISH_REASONS, choice.finish_reason) ?? 'other';
        }
      }
      const toolCalls: ToolCall[] = [...slots.values()].map((s) => ({ id: s.id || 'call_generated', name: s.name, ...toolInputFromText(s.args) }));
      return { text: progress.text, thinking: progress.thinking, toolCalls, stopReason: refused ? 'refusal' : stopReason, usage, model: responseModel, finished: sawFinish };
    }),
  anthropic: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const tools = new Map<number, { id: string; name: string; json: string; startInput: unknown }>();
      const thinking = new Map<number, AnthropicThinkingBlock>();
      const raw = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, thinking_tokens: 0 };
      const readUsage = (u: Record<string, unknown>) => {
        for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'] as const) {
          if (u[key] !== undefined && u[key] !== null) raw[key] = tokenCount(u[key]);
        }
        const details = isPlainObject(u.output_tokens_details) ? u.output_tokens_details : {};
        if (details.thinking_tokens !== undefined && details.thinking_tokens !== null) raw.thinking_tokens = tokenCount(details.thinking_tokens);
      };
      let stopReason: StopReason = 'end_turn';
      let responseModel: string | undefined;
      let stopped = false;
      for (const data of frames) {
        if (!isPlainObject(data)) continue;
        const index = typeof data.index === 'number' ? data.index : -1;
        switch (data.type) {
          case 'message_start':
            readUsage(isPlainObject(data.message) && isPlainObject(data.message.usage) ? data.message.usage : {});
            responseModel = (isPlainObject(data.message) ? oldModelName(data.message.model) : undefined) ?? responseModel;
            break;
          case 'content_block_start': {
            const block = isPlainObject(data.content_block) ? data.content_block : {};
            if (block.type === 'tool_use') {
              tools.set(index, { id: oldWireString(block.id), name: oldWireString(block.name), json: '', startInput: block.input });
              progress.toolCallStarted();
            } else if (block.type === 'text' && typeof block.text === 'string') {
              progress.appendText(block.text);
            } else if (block.type === 'thinking') {
              const text = typeof block.thinking === 'string' ? block.thinking : '';
              thinking.set(index, { type: 'thinking', thinking: text, signature: typeof block.signature === 'string' ? block.signature : '' });
              progress.appendThinking(text);
            } else if (block.type === 'redacted_thinking') {
              thinking.set(index, { type: 'redacted_thinking', data: typeof block.data === 'string' ? block.data : '' });
            }
            break;
          }
          case 'content_block_delta': {
            const delta = isPlainObject(data.delta) ? data.delta : {};
            const block = thinking.get(index);
            if (delta.type === 'text_delta' && typeof delta.text === 'string') {
              progress.appendText(delta.text);
            } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
              const tool = tools.get(index);
              if (tool) tool.json += delta.partial_json;
            } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && block?.type === 'thinking') {
              block.thinking += delta.thinking;
              progress.appendThinking(delta.thinking);
            } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string' && block?.type === 'thinking') {
              block.signature += delta.signature;
            }
            break;
          }
          case 'message_delta': {
            const delta = isPlainObject(data.delta) ? data.delta : {};
            if (typeof delta.stop_reason === 'string') stopReason = ownEntry(ANTHROPIC_STOP_REASONS, delta.stop_reason) ?? 'other';
            readUsage(isPlainObject(data.usage) ? data.usage : {});
            break;
          }
          case 'message_stop':
            stopped = true;
            break;
          case 'error':
            throw classifyStreamError('anthropic', data, ENDPOINT);
          default:
            break;
        }
        if (stopped) break;
      }
      const toolCalls: ToolCall[] = [...tools.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, t]) => ({ id: t.id, name: t.name, ...(t.json.trim() !== '' ? toolInputFromText(t.json) : toolInputFromValue(t.startInput)) }));
      const usage = {
        inputTokens: raw.input_tokens + raw.cache_creation_input_tokens + raw.cache_read_input_tokens,
        outputTokens: raw.output_tokens,
        cacheReadTokens: raw.cache_read_input_tokens,
        cacheWriteTokens: raw.cache_creation_input_tokens,
        reasoningTokens: raw.thinking_tokens,
      };
      const blocks = [...thinking.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
      return { text: progress.text, thinking: progress.thinking, toolCalls, stopReason, usage, model: responseModel, finished: stopped, blocks };
    }),
  google: (frames) =>
    outcome(() => {
      const progress = new ProgressTracker(undefined);
      const toolCalls: ToolCall[] = [];
      const parts = new GeminiPartRecorder();
      const usage: Required<Usage> = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
      let stopReason: StopReason = 'end_turn';
      let responseModel: string | undefined;
      let finished = false;
      const blocked = (detail: string) => new LlmError({ type: 'content_blocked', provider: 'google', endpoint: ENDPOINT, detail });
      for (const chunk of frames) {
        if (!isPlainObject(chunk)) continue;
        if (chunk.error !== undefined && chunk.error !== null) throw classifyStreamError('google', chunk, ENDPOINT);
        if (isPlainObject(chunk.usageMetadata)) {
          const meta = chunk.usageMetadata;
          const has = (key: string) => meta[key] !== undefined && meta[key] !== null;
          if (has('promptTokenCount')) usage.inputTokens = tokenCount(meta.promptTokenCount);
          if (has('cachedContentTokenCount')) usage.cacheReadTokens = tokenCount(meta.cachedContentTokenCount);
          if (has('thoughtsTokenCount')) usage.reasoningTokens = tokenCount(meta.thoughtsTokenCount);
          if (has('candidatesTokenCount') || has('thoughtsTokenCount')) usage.outputTokens = tokenCount(meta.candidatesTokenCount) + usage.reasoningTokens;
        }
        responseModel = oldModelName(chunk.modelVersion) ?? responseModel;
        const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
        if (!isPlainObject(candidate)) {
          if (isPlainObject(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string') throw blocked(`the prompt was blocked (${chunk.promptFeedback.blockReason})`);
          continue;
        }
        const candidateParts = isPlainObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
        for (const part of candidateParts) {
          if (!isPlainObject(part)) continue;
          const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
          const text = typeof part.text === 'string' ? part.text : '';
          if (isPlainObject(part.functionCall)) {
            parts.call(toolCalls.length, signature);
            toolCalls.push({ id: `gemini_${toolCalls.length + 1}`, name: oldWireString(part.functionCall.name), ...toolInputFromValue(part.functionCall.args) });
            progress.toolCallStarted();
          } else if (part.thought === true) {
            parts.thought(text, signature);
            progress.appendThinking(text);
          } else {
            parts.text(text, signature);
            progress.appendText(text);
          }
        }
        if (typeof candidate.finishReason === 'string' && candidate.finishReason !== '') {
          if (GEMINI_BLOCKING.has(candidate.finishReason)) throw blocked(`the answer was stopped (${candidate.finishReason})`);
          finished = true;
          stopReason = ownEntry(GEMINI_FINISH_REASONS, candidate.finishReason) ?? 'other';
        }
      }
      return { text: progress.text, thinking: progress.thinking, toolCalls, stopReason, usage, model: responseModel, finished, parts: parts.refs };
    }),
};

const OPENAI_FINISH_REASONS: Record<string, StopReason> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal' };
const ANTHROPIC_STOP_REASONS: Record<string, StopReason> = { end_turn: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens', stop_sequence: 'stop_sequence', refusal: 'refusal' };
const GEMINI_FINISH_REASONS: Record<string, StopReason> = { STOP: 'end_turn', MAX_TOKENS: 'max_tokens' };
const GEMINI_BLOCKING = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

function oldModelName(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function oldWireString(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

// ---- the run ----

/** The reading's result, or the error it failed with; ids the adapters generate at random made stable. */
function outcome(read: () => Outcome): Outcome {
  try {
    const out = read();
    const calls = out.toolCalls as ToolCall[];
    return { ...out, toolCalls: calls.map((c) => ({ ...c, id: c.id.replace(/^call_[0-9a-f]{18}$/, 'call_generated').replace(/^gemini_[0-9a-f]{12}_/, 'gemini_') })) };
  } catch (error) {
    return { failed: error instanceof Error ? error.message : String(error) };
  }
}

function providerOf(first: unknown): Provider {
  if (isPlainObject(first) && typeof first.type === 'string') return 'anthropic';
  if (isPlainObject(first) && ('choices' in first || 'object' in first)) return 'openai';
  return 'google';
}

function loadStreams(): Stream[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.chunks.txt'))
    .sort()
    .map((name) => {
      const frames = readFileSync(path.join(FIXTURES, name), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && line.trim() !== '[DONE]')
        .map((line) => JSON.parse(line) as unknown);
      return { name, provider: providerOf(frames[0]), frames };
    });
}

/**
 * Nanoseconds of this process's CPU per chunk of reading every stream `passes` times: CPU
 * time rather than wall time, so the time the machine's other work takes the core away
 * is not counted (the two cores here are shared).
 */
function timePasses(streams: readonly Stream[], readers: Record<Provider, Reader>, passes: number, chunks: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < passes; i++) for (const s of streams) readers[s.provider](s.frames);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1_000) / (passes * chunks);
}

/** As many passes as fill about {@link BLOCK_MS}, from a first timing. */
function passesPerBlock(streams: readonly Stream[], readers: Record<Provider, Reader>, chunks: number): number {
  const nsPerChunk = timePasses(streams, readers, 20, chunks);
  return Math.max(1, Math.round((BLOCK_MS * 1e6) / (nsPerChunk * chunks)));
}

function main(): void {
  const streams = loadStreams();
  for (const s of streams) {
    const old = JSON.stringify(guardReaders[s.provider](s.frames));
    const now = JSON.stringify(schemaReaders[s.provider](s.frames));
    if (old !== now) throw new Error(`${s.name}: the schema reading differs from the guards'\n  guards: ${old}\n  schema: ${now}`);
  }
  const chunks = streams.reduce((n, s) => n + s.frames.length, 0);
  const lengths = streams.map((s) => s.frames.length);
  console.log(`${streams.length} recorded streams, ${chunks} chunks (median ${median(lengths)}, most ${Math.max(...lengths)} per stream); both ways read all of them alike`);

  const texts = streams.flatMap((s) => s.frames.map((f) => JSON.stringify(f)));
  const jsonStart = process.cpuUsage();
  for (let i = 0; i < 200; i++) for (const t of texts) JSON.parse(t);
  const jsonUsed = process.cpuUsage(jsonStart);
  const jsonNs = ((jsonUsed.user + jsonUsed.system) * 1_000) / (200 * chunks);

  const passes = { guards: passesPerBlock(streams, guardReaders, chunks), schema: passesPerBlock(streams, schemaReaders, chunks) };
  const samples = { guards: [] as number[], schema: [] as number[] };
  for (let b = 0; b < BLOCKS; b++) {
    // Alternating order, so a noisy moment or a warming JIT does not favour one way.
    const order = b % 2 === 0 ? (['guards', 'schema'] as const) : (['schema', 'guards'] as const);
    for (const way of order) samples[way].push(timePasses(streams, way === 'guards' ? guardReaders : schemaReaders, passes[way], chunks));
  }
  const guards = median(samples.guards);
  const schema = median(samples.schema);
  const extraPerChunkNs = schema - guards;
  const perStream = (n: number) => (extraPerChunkNs * n) / 1e6;
  const pct = (ms: number, of: number) => ((ms / of) * 100).toFixed(3);
  console.log(`per chunk, median of ${BLOCKS} blocks: guards ${guards.toFixed(0)} ns, schema ${schema.toFixed(0)} ns: ${(schema / guards).toFixed(2)} ×, ${extraPerChunkNs.toFixed(0)} ns more (JSON.parse of a chunk, which both ways pay, for scale: ${jsonNs.toFixed(0)} ns)`);
  for (const n of [median(lengths), Math.max(...lengths)]) {
    console.log(`an answer of ${n} chunks: ${perStream(n).toFixed(3)} ms more, ${pct(perStream(n), STEP_P50_MS)} % of a ${STEP_P50_MS} ms step, ${pct(perStream(n), WORKER_CPU_PER_STEP_MS)} % of its ${WORKER_CPU_PER_STEP_MS} ms of worker CPU`);
  }
}

main();
