import { readFileSync } from 'node:fs';
import { SessionInputSchema } from '../../contracts/api';
import { COMPACT_AT, SESSION_LIMITS, TOOL_NAMES, ToolNameSchema } from '../../contracts/session-settings';
import { BUILTIN_TOOLS } from '../../contracts/tools/registry';
import { durationMs } from '../../contracts/turn-limits';
import { splitList, type ClientEnv } from '../config';
import { ConfigError } from '../../config/config-error';
import { parseRetryPolicyArg } from '../retry-policy';
import type { StartOptions } from '../sessions';
import { defaultMcpServers } from '../mcp-default';
import { parseList, parseModel } from './command';
import { AgentNameSchema } from '../../contracts/agents/agent-record';
import { ModelRefSchema } from '../../contracts/model-ref';
import { OUTPUT_RETRIES } from '../../contracts/structured-output';
import { AGENT_DEPTH } from '../../contracts/sub-agents';
import { readOutputSchemaFile } from '../output-schema-file';

/**
 * The session's own settings as flags of `start` and `run`. Each flag's value is checked
 * by the same zod schema the session validates its input with (`SessionInputSchema`), so
 * the client refuses exactly what the session would, in one line naming the flag and
 * what it accepts, before anything reaches the server.
 *
 * A new flag is one entry in SESSION_FLAGS: its parseArgs type, its help line (ending
 * with its default) and the settings its value sets.
 */
interface SessionFlag {
  /** node:util parseArgs' option spec. */
  arg: { type: 'string'; multiple?: true } | { type: 'boolean' };
  /** The flag as the help shows it, e.g. `--max-steps N`. */
  usage: string;
  /** What it sets and its default. */
  help: string;
  read(value: string | boolean | string[]): Partial<StartOptions>;
}

const text = (usage: string, help: string, read: (text: string) => Partial<StartOptions>) =>
  ({ arg: { type: 'string' } as const, usage, help, read: (value: string | boolean | string[]) => read(String(value)) }) satisfies SessionFlag;

const repeatable = (usage: string, help: string, read: (texts: string[]) => Partial<StartOptions>) =>
  ({
    arg: { type: 'string', multiple: true } as const,
    usage,
    help,
    read: (value: string | boolean | string[]) => read(Array.isArray(value) ? value : [String(value)]),
  }) satisfies SessionFlag;

type SettingName = keyof typeof SessionInputSchema.shape;

/** Checks one setting with the session's own schema for it; `refusal` turns the schema's complaint into the line a person reads. */
function checked<K extends SettingName>(name: K, value: unknown, refusal: (why: string) => string): StartOptions[K] {
  const parsed = SessionInputSchema.shape[name].safeParse(value);
  if (!parsed.success) throw new ConfigError(refusal(parsed.error.issues[0]?.message ?? 'invalid'));
  return parsed.data as StartOptions[K];
}

type CountName = 'maxSteps' | 'maxTokens' | 'toolConcurrency' | 'continueAsNewAfterEvents' | 'contextWindow' | 'clearToolResultsAfter';
type MillisecondsName = 'idleTimeoutMs' | 'approvalTimeoutMs' | 'toolTimeoutMs';

const range = (name: CountName) => `a whole number from ${SESSION_LIMITS[name].min} to ${SESSION_LIMITS[name].max}`;
const secondsRange = (name: MillisecondsName) => `seconds from ${SESSION_LIMITS[name].min / 1000} to ${SESSION_LIMITS[name].max / 1000}`;

/** `''` is not 0: an empty value is refused, not read as the smallest number. */
const numberOf = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

/**
 * Seconds, to the millisecond, as the session's milliseconds; anything else is NaN, which
 * the session's schema refuses. Decimals beyond three places would not be whole ms.
 */
const millisecondsOf = (text: string) => (/^\s*\d+(\.\d{1,3})?\s*$/.test(text) ? Math.round(Number(text) * 1000) : Number.NaN);

/** A number checked by the setting's own schema, refused with the schema's words: `--budget-usd must be …, got "x"`. */
const number = <K extends SettingName>(flag: string, name: K, value: string) =>
  checked(name, numberOf(value), (why) => `${flag} ${why}, got ${JSON.stringify(value)}`);

const count = (flag: string, name: CountName, value: string) =>
  checked(name, numberOf(value), () => `${flag} must be ${range(name)}, got ${JSON.stringify(value)}`);

const seconds = (flag: string, name: 'idleTimeoutMs' | 'approvalTimeoutMs', value: string) =>
  checked(name, millisecondsOf(value), () => `${flag} must be ${secondsRange(name)}, got ${JSON.stringify(value)}`);

/** `--tool-timeout read_file=30 --tool-timeout http_request=5` → `{ read_file: 30000, http_request: 5000 }`. */
function toolTimeouts(entries: string[]): StartOptions['toolTimeouts'] {
  const timeouts: Record<string, number> = {};
  for (const entry of entries) {
    const match = /^\s*([^=\s]+)\s*=\s*(\S+)\s*$/.exec(entry);
    if (!match) throw new ConfigError(`--tool-timeout needs NAME=SECONDS, e.g. read_file=30, got ${JSON.stringify(entry)}`);
    const [, name = '', value = ''] = match;
    const known = ToolNameSchema.safeParse(name);
    if (!known.success) throw new ConfigError(`--tool-timeout: ${known.error.issues[0]?.message ?? 'unknown tool'}`);
    if (name in timeouts) throw new ConfigError(`--tool-timeout gives ${name} twice`);
    timeouts[name] = millisecondsOf(value);
    checked('toolTimeouts', timeouts, () => `--tool-timeout ${name} must be ${secondsRange('toolTimeoutMs')}, got ${JSON.stringify(value)}`);
  }
  return timeouts;
}

function systemFile(path: string): Partial<StartOptions> {
  let system: string;
  try {
    system = readFileSync(path, 'utf8');
  } catch (error) {
    // Node's message is `ENOENT: no such file or directory, open 'x'`: the part before the path is the reason.
    const reason = (error instanceof Error ? error.message : String(error)).split(',')[0];
    throw new ConfigError(`--system-file cannot read ${JSON.stringify(path)}: ${reason}`);
  }
  return { system: checked('system', system, (why) => `--system-file ${JSON.stringify(path)}: the system prompt ${why}`) };
}

/**
 * A list flag's items, each once: `--mcp docs,docs` is a typo (or a pasted list) that the
 * session would keep as given, so it is refused rather than silently made one.
 */
function distinct(flag: string, text: string): string[] {
  const items = parseList(flag, text);
  const twice = items.find((item, i) => items.indexOf(item) !== i);
  if (twice !== undefined) throw new ConfigError(`${flag} gives ${twice} twice`);
  return items;
}

const TOOL_LIST = TOOL_NAMES.join(',');
const TOOL_TIMEOUTS = BUILTIN_TOOLS.map((t) => `${t.name} ${t.timeouts.startToCloseMs / 1000}`).join(', ');

/** A limit in milliseconds of the session, given as a duration (`30s`, `2m`), with its range in the flag's words. */
function duration(flag: string, name: 'fallbackAfterMs' | 'fallbackReturnAfterMs', value: string) {
  const { min, max } = SESSION_LIMITS[name];
  return checked(name, durationMs(value), () => `${flag} must be a duration from ${min / 1000} s to ${durationText(max)}, such as ${DURATION_EXAMPLES[name]}, got ${JSON.stringify(value)}`);
}

const DURATION_EXAMPLES = { fallbackAfterMs: '30s or 2m', fallbackReturnAfterMs: '10m or 1h' } as const;

const durationText = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} m` : `${ms / 1000} s`);

/** `--fallback openai:gpt-5,google:gemini-2.5-pro`: each a model ref, each once, as many as the session takes. */
function fallbackModels(text: string) {
  if (splitList(text).length === 0) throw new ConfigError('--fallback needs a comma-separated list of models, e.g. --fallback openai:gpt-5,google:gemini-2.5-pro');
  const models = distinct('--fallback', text).map((model) => {
    const parsed = ModelRefSchema.safeParse(model);
    if (!parsed.success) throw new ConfigError(`--fallback: bad model ${JSON.stringify(model)}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data;
  });
  return checked('fallbacks', models, (why) => `--fallback ${why}`);
}

function agentName(text: string): string {
  const parsed = AgentNameSchema.safeParse(text);
  if (!parsed.success) throw new ConfigError(`--agent ${parsed.error.issues[0]?.message ?? 'invalid'}, got ${JSON.stringify(text)}`);
  return parsed.data;
}

/** `--agents researcher,billing`: agent names, each once; the worker refuses one it does not serve when the session lists its tools. */
function subAgentNames(text: string) {
  if (splitList(text).length === 0) throw new ConfigError('--agents needs a comma-separated list of agent names, e.g. --agents researcher,billing');
  const names = distinct('--agents', text).map((name) => {
    const parsed = AgentNameSchema.safeParse(name);
    if (!parsed.success) throw new ConfigError(`--agents: bad agent name ${JSON.stringify(name)}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data;
  });
  return checked('agents', names, (why) => `--agents ${why}`);
}

/** Every flag of a session, in the order the help lists them. */
export const SESSION_FLAGS = {
  agent: text(
    '--agent NAME',
    "one of the worker's agents (agent agents lists them): its model, prompt, tools and settings, each flag given here winning over the agent's; the environment's defaults (AGENT_MODEL, …) then do not apply (default: none)",
    (v) => ({ agent: agentName(v) }),
  ),
  agents: text(
    '--agents NAME,…',
    "the worker's agents the model may call as tools, agent__NAME: a call runs that agent on its task as a child session and answers with its result and spend; see docs/sub-agents.md (default: none, or the agent's)",
    (v) => ({ agents: subAgentNames(v) }),
  ),
  'max-agent-depth': text(
    '--max-agent-depth N',
    `how deep a tree of agents under this session may go, ${AGENT_DEPTH.min} to ${AGENT_DEPTH.max}: a call that would go deeper is answered with an error (default ${AGENT_DEPTH.default})`,
    (v) => ({ maxAgentDepth: checked('maxAgentDepth', numberOf(v), () => `--max-agent-depth must be a whole number from ${AGENT_DEPTH.min} to ${AGENT_DEPTH.max}, got ${JSON.stringify(v)}`) }),
  ),
  model: text('--model provider:model', 'the model (default AGENT_MODEL, else anthropic:claude-sonnet-4-5)', (v) => ({ model: parseModel(v) })),
  fallback: text(
    '--fallback provider:model,…',
    'models a step goes to, in order, when its call to the model before fails on an overload, a 5xx, the network or a timeout, never on a bad key, a bad request, a content block or a 429; see docs/fallback.md (default: none)',
    (v) => ({ fallbacks: fallbackModels(v) }),
  ),
  'fallback-after': text(
    '--fallback-after DURATION',
    `with --fallback: how long a model may be failing before a call goes to the next one without waiting out its retries, e.g. 30s, ${SESSION_LIMITS.fallbackAfterMs.min / 1000} s to ${durationText(SESSION_LIMITS.fallbackAfterMs.max)} (default ${SESSION_LIMITS.fallbackAfterMs.default / 1000}s)`,
    (v) => ({ fallbackAfterMs: duration('--fallback-after', 'fallbackAfterMs', v) }),
  ),
  'fallback-return-after': text(
    '--fallback-return-after DURATION',
    `with --fallback: back to the first model this long after a switch, e.g. 10m, ${SESSION_LIMITS.fallbackReturnAfterMs.min / 1000} s to ${durationText(SESSION_LIMITS.fallbackReturnAfterMs.max)} (default: at the next turn)`,
    (v) => ({ fallbackReturnAfterMs: duration('--fallback-return-after', 'fallbackReturnAfterMs', v) }),
  ),
  priority: text(
    '--priority interactive|batch',
    "under the worker fleet's shared rate limits (AGENT_LIMITS_FILE, docs/fleet-limits.md), an interactive session's calls go before a batch one's (default interactive)",
    (v) => ({ priority: checked('priority', v, (why) => `--priority ${why}, got ${JSON.stringify(v)}`) }),
  ),
  system: text('--system TEXT', 'the system prompt (default none)', (v) => ({ system: checked('system', v, (why) => `--system ${why}`) })),
  'system-file': text('--system-file PATH', 'the system prompt, read from a UTF-8 file (default none)', systemFile),
  id: text('--id ID', 'the session id (default session-<uuid>)', (v) => ({ workflowId: v })),
  'max-steps': text(
    '--max-steps N',
    `steps one turn may take, ${SESSION_LIMITS.maxSteps.min} to ${SESSION_LIMITS.maxSteps.max}; a turn that reaches it ends completed with reason step_limit. ` +
      `It stops runaway loops, it does not limit a session, which takes any number of turns (default ${SESSION_LIMITS.maxSteps.default}, or AGENT_MAX_STEPS)`,
    (v) => ({ maxSteps: count('--max-steps', 'maxSteps', v) }),
  ),
  'max-tokens': text(
    '--max-tokens N',
    `output tokens of one LLM call, ${SESSION_LIMITS.maxTokens.min} to ${SESSION_LIMITS.maxTokens.max}; lower it for models with a smaller limit (default ${SESSION_LIMITS.maxTokens.default}, or AGENT_MAX_TOKENS)`,
    (v) => ({ maxTokens: count('--max-tokens', 'maxTokens', v) }),
  ),
  reasoning: text(
    '--reasoning off|low|medium|high|TOKENS',
    'how hard the model thinks before it answers: a level, or a thinking budget of 1024 to 128000 tokens; thinking shows dimmed in watch and log (default off)',
    (v) => ({
      reasoning: checked('reasoning', /^\s*\d+\s*$/.test(v) ? Number(v) : v, () => `--reasoning must be off, low, medium, high or a token budget from 1024 to 128000, got ${JSON.stringify(v)}`),
    }),
  ),
  'no-prompt-cache': {
    arg: { type: 'boolean' } as const,
    usage: '--no-prompt-cache',
    help: "send no prompt-cache breakpoints (Anthropic) and no prompt_cache_key (OpenAI) (default: caching on)",
    read: (v: string | boolean | string[]) => (v === true ? { promptCache: false } : {}),
  },
  tools: text('--tools TOOL,…', `the only tools the model is offered (default all: ${TOOL_LIST}, or AGENT_TOOLS)`, (v) => ({
    tools: checked('tools', distinct('--tools', v), (why) => `--tools: ${why}`),
  })),
  mcp: text(
    '--mcp NAME,…',
    "the MCP servers of the worker's AGENT_MCP_CONFIG whose tools the model is offered, as mcp__NAME__TOOL (default: every server of the file AGENT_MCP_CONFIG names here, none without it)",
    (v) => ({ mcp: checked('mcp', distinct('--mcp', v), (why) => `--mcp: ${why}`) }),
  ),
  'tool-timeout': repeatable(
    '--tool-timeout NAME=SECONDS',
    `one tool call's time limit, ${secondsRange('toolTimeoutMs')}; repeat it for several tools (default, in seconds: ${TOOL_TIMEOUTS})`,
    (v) => ({ toolTimeouts: toolTimeouts(v) }),
  ),
  'tool-concurrency': text(
    '--tool-concurrency N',
    `read-only tool calls run at once, ${SESSION_LIMITS.toolConcurrency.min} to ${SESSION_LIMITS.toolConcurrency.max} (default ${SESSION_LIMITS.toolConcurrency.default})`,
    (v) => ({ toolConcurrency: count('--tool-concurrency', 'toolConcurrency', v) }),
  ),
  'idle-timeout': text(
    '--idle-timeout SECONDS',
    `the session ends by itself after this long without a message, ${secondsRange('idleTimeoutMs')} (default ${SESSION_LIMITS.idleTimeoutMs.default / 1000})`,
    (v) => ({ idleTimeoutMs: seconds('--idle-timeout', 'idleTimeoutMs', v) }),
  ),
  'retry-policy': text(
    "--retry-policy off|default|'<json>'",
    'the LLM retry policy, as the retry-policy command takes it (default: default, 11 attempts, 1 s doubling to 30 s, 240 s budget)',
    (v) => {
      let policy;
      try {
        policy = parseRetryPolicyArg(v);
      } catch (error) {
        throw new ConfigError(`--retry-policy: ${error instanceof Error ? error.message : String(error)}`);
      }
      // `default` is what an absent policy means; `null` (off) is a policy of its own.
      return policy === 'default' ? {} : { retryPolicy: policy };
    },
  ),
  'continue-as-new-after': text(
    '--continue-as-new-after EVENTS',
    `continue as new once history has this many events, between turns, ${SESSION_LIMITS.continueAsNewAfterEvents.min} to ${SESSION_LIMITS.continueAsNewAfterEvents.max} (default: when Temporal suggests it)`,
    (v) => ({ continueAsNewAfterEvents: count('--continue-as-new-after', 'continueAsNewAfterEvents', v) }),
  ),
  'context-window': text(
    '--context-window N',
    `the model's context window in tokens, ${SESSION_LIMITS.contextWindow.min} to ${SESSION_LIMITS.contextWindow.max}: before a request would pass --compact-at of it, the session first has the model summarise the conversation so far, and sends the summary in place of it ` +
      '(default: the model\'s window in the table of known models or AGENT_MODELS_FILE; a model in neither is never compacted)',
    (v) => ({ contextWindow: count('--context-window', 'contextWindow', v) }),
  ),
  'compact-at': text(
    '--compact-at FRACTION',
    `the share of the context window a request may reach before the session compacts first, ${COMPACT_AT.min} to ${COMPACT_AT.max} (default ${COMPACT_AT.default})`,
    (v) => ({ compactAt: number('--compact-at', 'compactAt', v) }),
  ),
  'clear-tool-results-after': text(
    '--clear-tool-results-after N',
    `tool results over 4 KiB from more than N turns back are sent to the model as one line naming the tool, the call and the size (the log keeps them), ${SESSION_LIMITS.clearToolResultsAfter.min} to ${SESSION_LIMITS.clearToolResultsAfter.max} (default: none cleared)`,
    (v) => ({ clearToolResultsAfter: count('--clear-tool-results-after', 'clearToolResultsAfter', v) }),
  ),
  'approve-tools': text('--approve-tools TOOL,…|*', 'side-effecting tools whose calls wait for a human decision, * for all (default none)', (v) => ({
    // Only side-effecting tools (write_file, http_request) ever wait; `*` means all of them.
    approvalRequired: checked('approvalRequired', distinct('--approve-tools', v), (why) => `--approve-tools: ${why}`),
  })),
  'approval-timeout': text(
    '--approval-timeout SECONDS',
    `how long a call waits for that decision, ${secondsRange('approvalTimeoutMs')} (default ${SESSION_LIMITS.approvalTimeoutMs.default / 1000})`,
    (v) => ({ approvalTimeoutMs: seconds('--approval-timeout', 'approvalTimeoutMs', v) }),
  ),
  'turn-timeout': text(
    '--turn-timeout DURATION',
    'a turn\'s wall-clock limit, e.g. 90s, 10m, 1h (1 s to 24 h): then the turn is cancelled, its open tool calls answered, and it fails turn_timeout (default: none)',
    (v) => ({ turnTimeoutMs: checked('turnTimeoutMs', durationMs(v), (why) => `--turn-timeout ${why}, got ${JSON.stringify(v)}`) }),
  ),
  'max-repeats': text(
    '--max-repeats N',
    'identical tool calls (same name, same arguments) the model may make in a row within a turn; the next one is not run and the model is told so (default: no limit)',
    (v) => ({ maxRepeats: number('--max-repeats', 'maxRepeats', v) }),
  ),
  'budget-usd': text(
    '--budget-usd USD',
    "USD the session may spend by the worker's price table; once spent, the next LLM call is refused and the turn fails budget_exceeded (default: no limit)",
    (v) => ({ budgetUsd: number('--budget-usd', 'budgetUsd', v) }),
  ),
  'budget-tokens': text(
    '--budget-tokens N',
    'tokens (input + output) the session may spend; once spent, the next LLM call is refused and the turn fails budget_exceeded (default: no limit)',
    (v) => ({ budgetTokens: number('--budget-tokens', 'budgetTokens', v) }),
  ),
  'budget-warn': text(
    '--budget-warn FRACTION',
    'at this share of a budget (e.g. 0.8) the turn pauses until approve <id> budget or deny <id> budget, for --approval-timeout (default: no pause)',
    (v) => ({ budgetWarn: number('--budget-warn', 'budgetWarn', v) }),
  ),
  'output-schema': text(
    '--output-schema FILE',
    "a JSON Schema file (its root an object schema) that every turn's answer must match: the turn ends in a JSON value of that shape, checked by the session, or fails output_invalid; a message's own schema (send --output-schema) wins (default: free text, or the agent's output)",
    (v) => ({ outputSchema: readOutputSchemaFile('--output-schema', v) }),
  ),
  'output-retries': text(
    '--output-retries N',
    `times the model is sent the errors of an answer that does not match the schema and asked again, ${OUTPUT_RETRIES.min} to ${OUTPUT_RETRIES.max}; each is a step (default ${OUTPUT_RETRIES.default})`,
    (v) => ({ outputRetries: number('--output-retries', 'outputRetries', v) }),
  ),
} as const satisfies Record<string, SessionFlag>;

type SessionFlagName = keyof typeof SESSION_FLAGS;

/** The flags' parseArgs specs, for `parseCommandArgs`. */
export const SESSION_OPTIONS = Object.fromEntries(Object.entries(SESSION_FLAGS).map(([name, flag]) => [name, flag.arg])) as {
  [K in SessionFlagName]: (typeof SESSION_FLAGS)[K]['arg'];
};

export const SESSION_SYNOPSIS = '[SESSION OPTIONS]';

/** The session options for `--help`: one per line, with its default. */
export const SESSION_OPTIONS_HELP = `session options:\n${Object.values(SESSION_FLAGS)
  .map((flag: SessionFlag) => `  ${flag.usage}\n      ${flag.help}`)
  .join('\n')}`;

/**
 * The session options from the environment's defaults and the flags given. Two flags
 * that set the same setting (`--system` and `--system-file`) are refused, not ranked.
 */
export function sessionOptionsFrom(values: { [K in SessionFlagName]?: string | boolean | string[] }, env: ClientEnv): StartOptions {
  const fromFlags: Partial<StartOptions> = {};
  const setBy = new Map<string, string>();
  for (const name of Object.keys(SESSION_FLAGS) as SessionFlagName[]) {
    const value = values[name];
    if (value === undefined) continue;
    const flag: SessionFlag = SESSION_FLAGS[name];
    for (const [setting, settingValue] of Object.entries(flag.read(value))) {
      const other = setBy.get(setting);
      if (other) throw new ConfigError(`${other} and --${name} both set ${setting}; give one of them`);
      setBy.set(setting, `--${name}`);
      Object.assign(fromFlags, { [setting]: settingValue });
    }
  }
  // An agent's settings are its own: only what the command line gives wins over them.
  if (fromFlags.agent !== undefined) return fromFlags;
  // The model's window is resolved by startSession, from env.modelWindows.
  return {
    model: env.AGENT_MODEL,
    ...(env.AGENT_MAX_STEPS === undefined ? {} : { maxSteps: env.AGENT_MAX_STEPS }),
    ...(env.AGENT_MAX_TOKENS === undefined ? {} : { maxTokens: env.AGENT_MAX_TOKENS }),
    ...(env.AGENT_TOOLS === undefined ? {} : { tools: env.AGENT_TOOLS }),
    ...defaultMcpServers(process.env),
    ...fromFlags,
  };
}
