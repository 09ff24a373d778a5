import { z } from 'zod';
import { GatewayError } from '../errors';

/**
 * A response is one turn of one session, and its id says which: `resp_` and the session id
 * and turn, base64url-encoded. Opaque to the client, which only hands it back as
 * `previous_response_id`. It needs no signature: it grants nothing, as whoever sends it
 * may use the session only if their key may (`authorizeSession`).
 */
export interface ResponseRef {
  sessionId: string;
  turn: number;
}

const PREFIX = 'resp_';

const RefSchema = z.strictObject({ s: z.string().min(1), t: z.number().int().positive() });

export function responseIdOf(ref: ResponseRef): string {
  return PREFIX + Buffer.from(JSON.stringify({ s: ref.sessionId, t: ref.turn })).toString('base64url');
}

/** The session and turn of a response id; anything this gateway did not make is a 400 naming `field`. */
export function parseResponseId(id: string, field: string): ResponseRef {
  const refused = () => new GatewayError('invalid_request', `${field}: not a response id of this gateway`, {}, field);
  if (!id.startsWith(PREFIX)) throw refused();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw refused();
  }
  const parsed = RefSchema.safeParse(decoded);
  if (!parsed.success) throw refused();
  return { sessionId: parsed.data.s, turn: parsed.data.t };
}
