import type { ResponseCreate } from './schemas';

/**
 * The turn's message from a request's `input`. The session holds the conversation, so an
 * input is only what the user says now: a string, or user messages, joined by a blank line
 * into the one message a turn takes (what came before is continued with
 * `previous_response_id`, never resent).
 */
export function inputText(input: ResponseCreate['input']): string {
  if (typeof input === 'string') return input;
  return input.map(({ content }) => (typeof content === 'string' ? content : content.map((part) => part.text).join(''))).join('\n\n');
}
