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
 */

export const ENCRYPTION_KEY_ENV = 'AGENT_ENCRYPTION_KEY';
export const ENCRYPTION_KEY_ID_ENV = 'AGENT_ENCRYPTION_KEY_ID';

/** AES-256: the key is exactly this many bytes. */
export const KEY_BYTES = 32;

export interface EncryptionKey {
  id: string;
  bytes: Buffer;
}

const Base64 = /^[A-Za-z0-9+/]+={0,2}$/;

const EncryptionEnvSchema = z
  .object({
    [ENCRYPTION_KEY_ENV]: z
      .string()
      // Never echo the value in a message: it is the key.
      .refine((v) => Base64.test(v) && v.length % 4 === 0, { message: `${ENCRYPTION_KEY_ENV} must be base64 (e.g. the output of \`openssl rand -base64 32\`)` })
      .refine((v) => Buffer.from(v, 'base64').length === KEY_BYTES, { message: `${ENCRYPTION_KEY_ENV} must decode to exactly ${KEY_BYTES} bytes (AES-256)` })
      .optional(),
    [ENCRYPTION_KEY_ID_ENV]: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: `${ENCRYPTION_KEY_ID_ENV} must be 1-64 letters, digits, dots, dashes or underscores` })
      .optional(),
  })
  .refine((env) => (env[ENCRYPTION_KEY_ENV] === undefined) === (env[ENCRYPTION_KEY_ID_ENV] === undefined), {
    message: `set both ${ENCRYPTION_KEY_ENV} and ${ENCRYPTION_KEY_ID_ENV}, or neither`,
  });

/**
 * The key, or `undefined` when encryption is off. Blank variables count as unset, as in
 * the worker's other settings. Throws one {@link ConfigError} naming every bad variable.
 */
export function encryptionKeyFromEnv(env: Record<string, string | undefined>): EncryptionKey | undefined {
  const picked = {
    [ENCRYPTION_KEY_ENV]: env[ENCRYPTION_KEY_ENV] || undefined,
    [ENCRYPTION_KEY_ID_ENV]: env[ENCRYPTION_KEY_ID_ENV] || undefined,
  };
  const parsed = EncryptionEnvSchema.safeParse(picked);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => issue.message).join('; '));
  const key = parsed.data[ENCRYPTION_KEY_ENV];
  const id = parsed.data[ENCRYPTION_KEY_ID_ENV];
  if (key === undefined || id === undefined) return undefined;
  return { id, bytes: Buffer.from(key, 'base64') };
}
