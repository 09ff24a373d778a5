import { createHash } from 'node:crypto';
import { readConversation, type DemoResult } from './demo-conversation';
import { demoValue } from './demo-answer';
import type { ScriptedJsonValue, ScriptedReply } from './script';
import type { Provider } from './wire/dialect';
import type { RequestedOutput } from './wire/structured-output';

/**
 * The offline demo model: what the scripted LLM answers a model with nothing scripted, so a
 * fresh clone with no provider key can try its own prompts. A pure function of the request:
 * the same request gets the same reply, tool call ids included, so a retried or replayed
 * step sees what the first attempt saw.
 *
 * - Arithmetic in the user's last message ("What is 6*7?", "(2+3)*4") is a `calculator`
 *   call; a request to write a file ("Write 'hello' to notes.txt") a `write_file` call; to
 *   read one ("Read notes.txt", "What's in notes.txt?") a `read_file` call.
 * - Once a tool result answers that message, the reply says what the tool returned, in a
 *   sentence. So a turn makes at most one call per user message and always ends.
 * - Anything else, or a tool the request does not offer, gets a short honest text: this
 *   is the demo model, and how to talk to a real one.
 *
 * - A request that asks for structured output (`output`, wire/structured-output.ts) gets
 *   its answer as a value of the schema that carries the sentence (demo-answer.ts), its
 *   tool calls as they are.
 *
 * It returns the same reply objects a script holds, so it streams in every wire format
 * exactly as a scripted reply does.
 */
export function demoReply(provider: Provider, body: Record<string, unknown>, output?: RequestedOutput): ScriptedReply {
  const reply = demoStep(provider, body);
  if (output === undefined || reply.kind !== 'text') return reply;
  // A value built from a JSON schema, its constants and enums taken from that JSON: JSON itself.
  return { kind: 'json', value: demoValue(output.schema, reply.text) as ScriptedJsonValue };
}

function demoStep(provider: Provider, body: Record<string, unknown>): ScriptedReply {
  const conversation = readConversation(provider, body);
  const intent = intentOf(conversation.prompt);
  if (conversation.results.length > 0) {
    return { kind: 'text', text: conversation.results.map((result) => summary(result, intent)).join('\n\n') };
  }
  if (!intent) return { kind: 'text', text: ABOUT };
  if (!conversation.tools.includes(intent.call.name)) {
    return { kind: 'text', text: `I would use the ${intent.call.name} tool for that, but this session does not offer it. ${ABOUT}` };
  }
  const id = callId(provider, body);
  return { kind: 'tool_calls', text: intent.preface, calls: [{ ...(id === undefined ? {} : { id }), ...intent.call }] };
}

const ABOUT =
  'This is the offline demo model of the durable agent worker, answering in place of a real LLM. ' +
  'It does arithmetic with the calculator tool ("What is 6*7?"), reads a file ("Read notes.txt") ' +
  'and writes one ("Write \'hello\' to notes.txt"). To talk to a real model, set ANTHROPIC_API_KEY, ' +
  'OPENAI_API_KEY or GEMINI_API_KEY and AGENT_MODEL (e.g. anthropic:claude-sonnet-4-5), then run npm start again.';

interface Intent {
  call: { name: 'calculator' | 'read_file' | 'write_file'; input: Record<string, string> };
  /** What the model says before the call, as a real model often does. */
  preface: string;
}

/**
 * How much of a prompt the patterns below read. A demo prompt is a line; a pattern run over
 * anyone's megabyte of text could backtrack for minutes.
 */
const PROMPT_CHARS = 2_000;

/** Writing first: "Write '2+2' to sums.txt" is a file to write, not a sum to work out. */
function intentOf(whole: string): Intent | undefined {
  const prompt = whole.slice(0, PROMPT_CHARS);
  const write = writeRequest(prompt);
  if (write) return { call: { name: 'write_file', input: write }, preface: `Let me write that to ${write.path}.` };
  const read = readRequest(prompt);
  if (read) return { call: { name: 'read_file', input: { path: read } }, preface: `Let me read ${read}.` };
  const expression = arithmetic(prompt);
  if (expression) return { call: { name: 'calculator', input: { expression } }, preface: `Let me compute ${expression} with the calculator.` };
  return undefined;
}

/** A word that names a file: it has an extension or a folder, so "read me a story" is not a path. */
function filePath(raw: string | undefined): string | undefined {
  const path = raw?.replace(/^["'`“‘]+|["'`”’.,;:!?)]+$/g, '');
  return path && /[^.]\.\w|\//.test(path) ? path : undefined;
}

const QUOTED = String.raw`(?:"([^"]*)"|'((?:[^']|'\w)*)'|“([^”]*)”|‘([^’]*)’|\x60([^\x60]*)\x60)`;
const WRITE_QUOTED = new RegExp(String.raw`\b(?:write|save|put|store)\s+${QUOTED}\s+(?:to|into|in)\s+(?:the\s+|a\s+)?(?:file\s+(?:called\s+|named\s+)?)?(\S+)`, 'i');
// The content starts with a non-space, so no two ways of splitting a run of spaces between \s+ and it.
const WRITE_BARE = /\b(?:write|save)\s+(\S.*?)\s+(?:to|into)\s+(?:the\s+|a\s+)?(?:file\s+(?:called\s+|named\s+)?)?(\S+)\s*$/i;

function writeRequest(prompt: string): { path: string; content: string } | undefined {
  const quoted = WRITE_QUOTED.exec(prompt);
  if (quoted) {
    const path = filePath(quoted[6]);
    const content = quoted.slice(1, 6).find((group) => group !== undefined);
    if (path && content !== undefined) return { path, content };
  }
  const bare = WRITE_BARE.exec(prompt);
  const path = filePath(bare?.[2]);
  return bare?.[1] && path ? { path, content: bare[1] } : undefined;
}

const READ = [
  /\b(?:read|show|open|cat|print|display)\s+(?:me\s+)?(?:the\s+)?(?:contents?\s+of\s+)?(?:the\s+)?(?:file\s+)?(\S+)/i,
  /\bwhat(?:'s|’s|\s+is)\s+in\s+(?:the\s+)?(?:file\s+)?(\S+)/i,
];

function readRequest(prompt: string): string | undefined {
  for (const pattern of READ) {
    const path = filePath(pattern.exec(prompt)?.[1]);
    if (path) return path;
  }
  return undefined;
}

/**
 * Runs of numbers, operators and parentheses, trimmed to start with an operand (or a minus)
 * and end with one; the longest with an operator between two operands. Each run is read
 * once: a pattern that must end in an operand backtracks over every "(((…" it meets.
 */
const RUN = /[\d\s.+\-*/%^()]+/g;
const OPERATION = /[\d)]\s*[+\-*/%^]\s*[-(\s]*[\d(]/;

function arithmetic(prompt: string): string | undefined {
  const runs = prompt.replaceAll('×', '*').replaceAll('÷', '/').match(RUN) ?? [];
  const candidates = runs.map(trimRun).filter((c) => OPERATION.test(c));
  return candidates.sort((a, b) => b.length - a.length)[0];
}

/** By hand, not by a pattern anchored at the end: that one backtracks over "((((…(1". */
function trimRun(run: string): string {
  let start = 0;
  let end = run.length;
  while (start < end && !/[-\d(]/.test(run[start]!)) start++;
  while (end > start && !/[\d)]/.test(run[end - 1]!)) end--;
  return run.slice(start, end);
}

/** One sentence on what a tool returned: only what the result says, so it is never wrong about it. */
function summary(result: DemoResult, intent: Intent | undefined): string {
  const content = result.content.trim();
  if (result.name === 'calculator') {
    const asked = intent?.call.name === 'calculator' ? intent.call.input.expression : undefined;
    if (content !== '' && Number.isFinite(Number(content))) return asked ? `${asked} = ${content}.` : `The calculator says ${content}.`;
    return `The calculator could not work that out: ${content}`;
  }
  if (result.name === 'read_file') return `read_file returned:\n\n${result.content}`;
  // Its answer is already a sentence that says what happened ("Wrote 5 bytes to notes.txt.", "Cannot write: …").
  if (result.name === 'write_file') return content;
  return `The ${result.name} tool answered: ${content}`;
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A provider-shaped id taken from the request's hash; Gemini has no call ids. */
function callId(provider: Provider, body: Record<string, unknown>): string | undefined {
  if (provider === 'google') return undefined;
  const [prefix, length] = provider === 'anthropic' ? ['toolu_01', 22] : ['call_', 24];
  const digest = createHash('sha256').update(JSON.stringify(body)).digest();
  let id = prefix;
  for (let i = 0; i < length; i++) id += ID_ALPHABET[digest[i]! % ID_ALPHABET.length];
  return id;
}
