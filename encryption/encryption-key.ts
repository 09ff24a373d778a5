import { z } from 'zod';
import { ConfigError } from '../config/config-error';

/**
 * The payload encryption key, from the environment of every process that reads or writes
 * session data: the worker, the client and the codec server. Encryption is optional: with
 * neither variable set, payloads are stored as plain JSON, as Temporal does by default.
 *
 * - `AGENT_ENCRYPTION_KEY`: 32 random bytes, base64 (`openssl rand -base64 32`).
 * - `AGENT_ENCRYPTION_KEY_ID`: a short name for that key, stored beside every payload,
 *   so a process holding another key says so instead of producing garbage.
 * - `AGENT_ENCRYPTION_PREVIOUS_KEYS`: keys used before a rotation, `id=base64,id=base64`.
 *   They only decrypt: an open session's history was written under them and is replayed
 *   whole, so a worker that dropped them could not run that session again.
 */

export const ENCRYPTION_KEY_ENV = 'AGENT_ENCRYPTION_KEY';
export const ENCRYPTION_KEY_ID_ENV = 'AGENT_ENCRYPTION_KEY_ID';
export const PREVIOUS_KEYS_ENV = 'AGENT_ENCRYPTION_PREVIOUS_KEYS';

/** AES-256: the key is exactly this many bytes. */
export const KEY_BYTES = 32;

export interface DecryptionKey {
  id: string;
  bytes: Buffer;
}

/** The key that encrypts, and the keys of earlier rotations that still decrypt. */
export interface EncryptionKey extends DecryptionKey {
  /** Absent when there are none. */
  previous?: readonly DecryptionKey[];
}

const Base64 = /^[A-Za-z0-9+/]+={0,2}$/;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const isKey = (v: string) => Base64.test(v) && v.length % 4 === 0 && Buffer.from(v, 'base64').length === KEY_BYTES;

const EncryptionEnvSchema = z
  .object({
    [ENCRYPTION_KEY_ENV]: z
      .string()
      // Never echo the value in a message: it is the key.
      .refine((v) => Base64.test(v) && v.length % 4 === 0, { message: `${ENCRYPTION_KEY_ENV} must be base64 (e.g. the output of \`openssl rand -base64 32\`)` })
      .refine((v) => Buffer.from(v, 'base64').length === KEY_BYTES, { message: `${ENCRYPTION_KEY_ENV} must decode to exactly ${KEY_BYTES} bytes (AES-256)` })
      .optional(),
    [ENCRYPTION_KEY_ID_ENV]: z.string().regex(KEY_ID, { message: `${ENCRYPTION_KEY_ID_ENV} must be 1-64 letters, digits, dots, dashes or underscores` }).optional(),
  })
  .refine((env) => (env[ENCRYPTION_KEY_ENV] === undefined) === (env[ENCRYPTION_KEY_ID_ENV] === undefined), {
    message: `set both ${ENCRYPTION_KEY_ENV} and ${ENCRYPTION_KEY_ID_ENV}, or neither`,
  });

/**
 * `id=key,id=key`. A message names an entry by its place, or by its id once it has one:
 * an entry that is not `id=key` may be a key pasted alone.
 */
function previousKeys(text: string, currentId: string): DecryptionKey[] {
  const entries = text.split(',').map((entry) => entry.trim());
  const keys: DecryptionKey[] = [];
  entries.forEach((entry, i) => {
    const match = /^([^=\s]+)=(\S+)$/.exec(entry);
    if (!match || !KEY_ID.test(match[1] ?? '')) throw new ConfigError(`${PREVIOUS_KEYS_ENV}: entry ${i + 1} is not id=key (id: 1-64 letters, digits, dots, dashes or underscores; key: base64 of ${KEY_BYTES} bytes)`);
    const [, id = '', key = ''] = match;
    if (!isKey(key)) throw new ConfigError(`${PREVIOUS_KEYS_ENV}: the key of "${id}" must be base64 of exactly ${KEY_BYTES} bytes (AES-256)`);
    if (id === currentId) throw new ConfigError(`${PREVIOUS_KEYS_ENV}: "${id}" is ${ENCRYPTION_KEY_ID_ENV} already; list only the ids of earlier keys`);
    if (keys.some((k) => k.id === id)) throw new ConfigError(`${PREVIOUS_KEYS_ENV}: "${id}" is given twice`);
    keys.push({ id, bytes: Buffer.from(key, 'base64') });
  });
  return keys;
}

/**
 * The key, or `undefined` when encryption is off. Blank variables count as unset, as in
 * the worker's other settings. Throws one {@link ConfigError} naming every bad variable.
 */
export function encryptionKeyFromEnv(env: Record<string, string | undefined>): EncryptionKey | undefined {
  const picked = {
    [ENCRYPTION_KEY_ENV]: env[ENCRYPTION_KEY_ENV] || undefined,
    [ENCRYPTION_KEY_ID_ENV]: env[ENCRYPTION_KEY_ID_ENV] || undefined,
  };
  const previous = env[PREVIOUS_KEYS_ENV]?.trim() || undefined;
  const parsed = EncryptionEnvSchema.safeParse(picked);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => issue.message).join('; '));
  const key = parsed.data[ENCRYPTION_KEY_ENV];
  const id = parsed.data[ENCRYPTION_KEY_ID_ENV];
  if (key === undefined || id === undefined) {
    if (previous !== undefined) throw new ConfigError(`${PREVIOUS_KEYS_ENV}: only decrypts, so it needs ${ENCRYPTION_KEY_ENV} and ${ENCRYPTION_KEY_ID_ENV} (the key that encrypts) beside it`);
    return undefined;
  }
  const ring = previous === undefined ? [] : previousKeys(previous, id);
  return { id, bytes: Buffer.from(key, 'base64'), ...(ring.length > 0 ? { previous: ring } : {}) };
}
