import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix` + `length` base62 characters, the shape of real ids (`toolu_01…`, `call_…`, `msg_…`). */
export function randomId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let id = prefix;
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
}
