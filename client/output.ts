import type { Message } from '../workflows/messages';

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
