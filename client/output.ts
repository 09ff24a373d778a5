import type { AssistantMessage, Message, ProviderData, Usage } from '../contracts/messages';
import { conversationOf } from '../contracts/conversation';
import type { SessionEvent } from '../contracts/session-log';
import type { CustomToolLane } from '../contracts/tools/custom-tool-offer';

const tty = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number) => (text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
export const dim = paint(2);
export const bold = paint(1);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);
export const cyan = paint(36);

/** A custom tool's lane rule as `log` and `tools` show it; `by_input` is its `sideEffects` function, which the worker asks per call. */
export const CUSTOM_LANE_NAMES: Record<CustomToolLane, string> = { read_only: 'read-only', side_effecting: 'side-effecting', by_input: 'read-only or side-effecting, by its input' };

/**
 * The conversation as a person reads it: every message as it was written. A compaction
 * changes only what the model is sent (the summary in front of the next user message, the
 * earlier messages left out), so it is left out here.
 */
export function readableConversation(events: readonly SessionEvent[]): Message[] {
  return conversationOf(events.filter((e) => e.type !== 'context/compacted'));
}

/** The conversation as a person reads it. */
export function formatConversation(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === 'user') lines.push(`${bold('you')}: ${m.text}`);
    else if (m.role === 'assistant') {
      if (m.text) lines.push(`${bold(cyan('assistant'))}: ${m.text}`);
      for (const call of m.toolCalls) lines.push(`  ${yellow('→')} ${call.name}(${JSON.stringify(call.input)}) ${dim(`#${call.id}`)}`);
    } else {
      const mark = m.code === 'ok' ? green('✓') : red('✗');
      const code = m.code === 'ok' ? '' : ` ${red(m.code)}`;
      lines.push(`  ${mark} ${m.name}${code}: ${truncate(m.content, 300)} ${dim(`#${m.toolCallId}`)}`);
    }
  }
  return lines.join('\n');
}

/**
 * The model's visible thinking, from the provider data that carries it: Anthropic's
 * thinking blocks (a redacted one shows as such) and Gemini's thought summaries.
 */
export function thinkingOf(providerData: ProviderData | undefined): string {
  if (!providerData) return '';
  if (providerData.provider === 'anthropic') {
    return providerData.thinking.map((b) => (b.type === 'thinking' ? b.thinking : '[redacted thinking]')).join('\n');
  }
  return providerData.parts.flatMap((p) => (p.type === 'thought' ? [p.text] : [])).join('');
}

/** `tokens in 1200 (cache read 1000, write 0) · out 300 (reasoning 120)`: the breakdowns only when not zero. */
export function formatUsage(u: Usage): string {
  const input = [u.cacheReadTokens ? `cache read ${u.cacheReadTokens}` : '', u.cacheWriteTokens ? `cache write ${u.cacheWriteTokens}` : ''].filter(Boolean);
  const reasoning = u.reasoningTokens ? ` (reasoning ${u.reasoningTokens})` : '';
  return `tokens in ${u.inputTokens}${input.length > 0 ? ` (${input.join(', ')})` : ''} · out ${u.outputTokens}${reasoning}`;
}

/** `$0.0123`, or `cost unknown` for a model without a price; nothing for a call recorded before calls were priced. */
export function formatCost(costUsd: number | null | undefined): string {
  if (costUsd === undefined) return '';
  return costUsd === null ? 'cost unknown' : `$${costUsd.toFixed(4)}`;
}

/** Usage, then its cost when there is one to tell. */
export function formatSpend(u: Usage & { costUsd?: number | null }): string {
  const cost = formatCost(u.costUsd);
  return cost ? `${formatUsage(u)} · ${cost}` : formatUsage(u);
}

/**
 * An assistant message's lines: its thinking dimmed, then the answer, or the refusal
 * marked as one. `all` adds the call names of a message that has no text.
 */
function formatAssistant(where: string, m: AssistantMessage, all: boolean): string | undefined {
  const thinking = thinkingOf(m.providerData);
  const who = bold(cyan('assistant'));
  let answer: string | undefined;
  if (m.stopReason === 'refusal') answer = `${who} ${red('refused')}${m.text ? `: ${m.text}` : ''}`;
  else if (m.text) answer = `${who}: ${m.text}`;
  else if (all) answer = `${who} ${dim(`calls ${m.toolCalls.map((c) => c.name).join(', ')}`)}`;
  if (answer !== undefined && all) answer += ` ${dim(`· ${formatSpend({ ...m.usage, costUsd: m.costUsd })}`)}`;
  const lines = [...(thinking ? [`${where} · ${dim(`thinking: ${thinking}`)}`] : []), ...(answer === undefined ? [] : [`${where} · ${answer}`])];
  return lines.length > 0 ? lines.join('\n') : undefined;
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * One session-log event as a line. Unless `all`, undefined for what a live view need not
 * show (a step that completed normally, an assistant message with only tool calls, which
 * its tool/call lines show). The same wording in `watch`, `send --wait` and `log`.
 */
export function formatEvent(e: SessionEvent, all = false): string | undefined {
  const where = 'step' in e ? `turn ${e.turn} · step ${e.step}` : `turn ${e.turn}`;
  switch (e.type) {
    case 'turn/start':
      return `${dim(where)} · ${bold('you')}: ${truncate(e.text, 300)}${e.output ? ` ${dim('· answer: JSON by the output schema')}` : ''}`;
    case 'turn/end': {
      const status = e.status === 'completed' ? green(e.status) : red(e.status);
      const reason = e.reason && e.reason !== 'answered' ? ` (${e.reason})` : '';
      const failure = e.failure ? `: ${red(`${e.failure.type}: ${e.failure.message}`)}` : '';
      const output = e.output === undefined ? '' : `, ${bold('output')}:\n${formatOutput(e.output)}`;
      return `${dim(where)} ${status}${reason}${failure}${output}`;
    }
    case 'step/start':
      return `${dim(where)} · llm ${e.model}`;
    case 'model/switched':
      // A fallback is news even in a live view: the step goes on with another model, and why.
      return e.why === 'fallback'
        ? `${dim(where)} · ${yellow('model')} ${e.from} → ${e.to} ${dim('·')} fallback after ${red(e.failure?.type ?? 'a failure')}${e.failure ? `: ${truncate(e.failure.message, 200)}` : ''}`
        : `${dim(where)} · ${yellow('model')} ${e.from} → ${e.to} ${dim('· back to the first model')}`;
    case 'step/end':
      if (e.status === 'completed') return all ? `${dim(where)} ${green('completed')}` : undefined;
      return `${dim(where)} ${red(e.status)}${e.failure ? `: ${e.failure.type}: ${e.failure.message}` : ''}`;
    case 'assistant':
      return formatAssistant(dim(where), e.message, all);
    case 'tool/call':
      // A sub-agent's call names the child session it runs in (docs/sub-agents.md).
      return `${dim(where)} · ${yellow('→')} ${e.name} ${truncate(JSON.stringify(e.input), 200)} ${dim(`#${e.callId}`)}${e.child ? ` ${childPointer(e.child.workflowId)}` : ''}`;
    case 'tool/result': {
      const mark = e.code === 'ok' ? green('✓') : red('✗');
      const code = e.code === 'ok' ? '' : ` ${red(e.code)}`;
      // A sub-agent's result: why its child failed, as the child had it, and what the child spent.
      const child = `${e.failure ? ` ${dim('·')} ${red(e.failure.type)}` : ''}${e.spend ? ` ${dim(`· spent ${formatSpend(e.spend)}`)}` : ''}`;
      return `${dim(where)} · ${mark} ${e.name}${code}: ${truncate(e.content, 300)}${child} ${dim(`#${e.callId}`)}`;
    }
    case 'tools/listed': {
      const mcp = `MCP tools listed: ${e.tools.length} from ${e.servers.join(', ') || 'no server'}`;
      if (!e.custom) return `${dim(where)} · ${mcp}`;
      // A session with custom tools and no server lists no server: only its custom tools are news.
      const custom = e.custom.map((t) => `${t.name} (${CUSTOM_LANE_NAMES[t.lane]})`).join(', ') || 'none';
      return `${dim(where)} · ${e.servers.length > 0 ? `${mcp} · custom tools: ${custom}` : `custom tools listed: ${custom}`}`;
    }
    case 'context/compacted':
      // The summary is for the model; a person reads the log itself, which keeps every event.
      return `${dim(where)} · compact · ${e.tokensBefore} → ${e.tokensAfter} tokens ${dim(`(through event ${e.throughSeq})`)}`;
    case 'session/handed-off':
      // Where the conversation went (docs/sub-agents.md#handing-the-conversation-over): the session that answers from now on.
      return `${dim(where)} · ${yellow('handed over to')} ${e.to.agent}: session ${e.to.workflowId}${e.reason ? ` ${dim(`· ${truncate(e.reason, 200)}`)}` : ''}`;
    case 'output/rejected':
      return `${dim(where)} · ${red('answer does not match the output schema')}: ${truncate(e.errors.join('; '), 300)} ${dim('(the model is asked again)')}`;
  }
}

/** `→ session <id>`: where a sub-agent's call ran, for `log`, `watch` and `history`. */
export function childPointer(workflowId: string): string {
  return dim(`→ session ${workflowId}`);
}

/** A structured answer's value as a person reads it: indented JSON, keys in the model's order. */
export function formatOutput(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
