import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';

type Content = CallToolResult['content'][number];

/** Result bytes the model is shown, as for the built-in tools' bodies and files (activities/tools/). */
export const MCP_RESULT_MAX_BYTES = 64 * 1024;

/**
 * A tool's answer as the result the model reads. Text stays text; images, audio and
 * resources become a short placeholder with their type and size, so no bytes of them
 * enter history; structured content is kept as JSON (its text copy, or the JSON itself when
 * the server gave no text). `isError` makes it an error result. Above 64 KiB the text is cut,
 * with a note that says so, as the built-in tools cut a body or a file.
 */
export function outcomeOf(result: CallToolResult): ToolOutcome {
  const parts = result.content.map(describe);
  // Servers are asked to repeat structured content as text; when they did not, the JSON is the answer.
  if (result.structuredContent !== undefined && !result.content.some((part) => part.type === 'text')) parts.push(JSON.stringify(result.structuredContent));
  return { code: result.isError === true ? 'error' : 'ok', content: cut(parts.join('\n')) };
}

function cut(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= MCP_RESULT_MAX_BYTES) return text;
  // `stream: true` leaves out a character the cut splits, instead of a replacement character.
  const kept = new TextDecoder('utf-8').decode(bytes.subarray(0, MCP_RESULT_MAX_BYTES), { stream: true });
  return `${kept}\n\n[result cut at ${MCP_RESULT_MAX_BYTES} bytes of ${bytes.length}]`;
}

function describe(part: Content): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const r = part.resource;
      const size = 'text' in r ? `${Buffer.byteLength(r.text)} bytes of text` : `${base64Bytes(r.blob)} bytes`;
      return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ''}, ${size}]`;
    }
    case 'resource_link':
      return `[resource link ${part.uri}${part.mimeType ? ` ${part.mimeType}` : ''}${part.size === undefined ? '' : `, ${part.size} bytes`}]`;
    default:
      return `[${(part as { type: string }).type} content]`;
  }
}

/** The decoded size of base64 text, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}
