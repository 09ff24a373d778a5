import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request bodies above this are refused: every read is bounded, even a client streaming forever. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too-large' };

export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) return { ok: false, reason: 'too-large' };
    chunks.push(buffer);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
