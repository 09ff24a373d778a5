/**
 * What Anthropic's and OpenAI's request bodies share: a `messages` array whose content is a
 * string or a list of typed parts, text parts among them.
 */
type Body = Record<string, unknown>;

function messagesOf(body: Body): Array<Record<string, unknown>> {
  return Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
}

/** The last text of the request's final message when the user sent it; undefined when the model did. */
export function finalUserText(body: Body): string | undefined {
  const messages = messagesOf(body);
  const last = messages[messages.length - 1];
  if (last?.role !== 'user') return undefined;
  if (typeof last.content === 'string') return last.content;
  const texts = Array.isArray(last.content) ? (last.content as Array<Record<string, unknown>>).filter((p) => p?.type === 'text' && typeof p.text === 'string') : [];
  return texts[texts.length - 1]?.text as string | undefined;
}

export function messageCount(body: Body): number {
  return messagesOf(body).length;
}
