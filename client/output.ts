import type { Message } from '../workflows/messages';
import type { SessionEvent } from '../workflows/session-log';

const tty = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number) => (text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
export const dim = paint(2);
export const bold = paint(1);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);
export const cyan = paint(36);

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
      return `${dim(where)} · ${bold('you')}: ${truncate(e.text, 300)}`;
    case 'turn/end': {
      const status = e.status === 'completed' ? green(e.status) : red(e.status);
      const reason = e.reason && e.reason !== 'answered' ? ` (${e.reason})` : '';
      const failure = e.failure ? `: ${red(`${e.failure.type}: ${e.failure.message}`)}` : '';
      return `${dim(where)} ${status}${reason}${failure}`;
    }
    case 'step/start':
      return `${dim(where)} · llm ${e.model}`;
    case 'step/end':
      if (e.status === 'completed') return all ? `${dim(where)} ${green('completed')}` : undefined;
      return `${dim(where)} ${red(e.status)}${e.failure ? `: ${e.failure.type}: ${e.failure.message}` : ''}`;
    case 'assistant': {
      if (e.message.text) return `${dim(where)} · ${bold(cyan('assistant'))}: ${e.message.text}`;
      return all ? `${dim(where)} · ${bold(cyan('assistant'))} ${dim(`calls ${e.message.toolCalls.map((c) => c.name).join(', ')}`)}` : undefined;
    }
    case 'tool/call':
      return `${dim(where)} · ${yellow('→')} ${e.name} ${truncate(JSON.stringify(e.input), 200)} ${dim(`#${e.callId}`)}`;
    case 'tool/result': {
      const mark = e.code === 'ok' ? green('✓') : red('✗');
      const code = e.code === 'ok' ? '' : ` ${red(e.code)}`;
      return `${dim(where)} · ${mark} ${e.name}${code}: ${truncate(e.content, 300)} ${dim(`#${e.callId}`)}`;
    }
  }
}
