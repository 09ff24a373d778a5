import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { describeIssues } from '../contracts/api';
import { AgentNameSchema } from '../contracts/agents/agent-record';
import { ConfigError } from '../config/config-error';
import type { GatewayKey } from './context';

/**
 * The gateway's keys file (AGENT_GATEWAY_KEYS_FILE): each key's name, the SHA-256 of its
 * secret, the agents it may start and whether it may approve. The secrets themselves are
 * never stored: `agent keys new` prints one once and writes its hash.
 *
 * Why a fast hash is enough: a key is 32 random bytes (256 bits), not a password a person
 * chose. A slow hash (bcrypt, scrypt) exists to make guessing a low-entropy secret from its
 * hash expensive; guessing 256 random bits is out of reach at any hash speed, so a slow
 * hash would only add its cost to every request.
 */

/** What a secret looks like: a prefix that says what it is (and what secret scanners match), and 32 random bytes. */
export const KEY_PREFIX = 'dagw_';
const SECRET_BYTES = 32;

export const KeyIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'must be 1 to 64 letters, digits, dots, dashes or underscores' });

export const KeyEntrySchema = z
  .object({
    id: KeyIdSchema,
    sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be the 64 hex digits of the secret’s SHA-256' }),
    /** The agents the key may start and whose sessions it may use; `'*'`: all of them, and sessions from settings too. */
    agents: z.union([z.literal('*'), z.array(AgentNameSchema).max(1_000)]),
    approve: z.boolean().default(false),
    /** Requests a minute this key may make (gateway/limits.ts); the gateway's default when absent. */
    requestsPerMinute: z.number().int().positive().max(1_000_000).optional(),
  })
  .strict();
export type KeyEntry = z.output<typeof KeyEntrySchema>;

export const KeysFileSchema = z
  .object({ keys: z.array(KeyEntrySchema).max(10_000) })
  .strict()
  .refine((file) => new Set(file.keys.map((k) => k.id)).size === file.keys.length, { error: 'two keys have the same id', path: ['keys'] });

/** A key as the gateway holds it: its entry, and the hash as bytes for the comparison. */
export interface KeyRing {
  /** The key whose secret this is, or undefined; compared against every key in constant time. */
  verify(secret: string): (GatewayKey & { requestsPerMinute?: number }) | undefined;
  readonly size: number;
}

export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function createKeyRing(entries: readonly KeyEntry[]): KeyRing {
  const held = entries.map((entry) => ({ entry, digest: Buffer.from(entry.sha256, 'hex') }));
  return {
    size: held.length,
    verify(secret) {
      const digest = createHash('sha256').update(secret, 'utf8').digest();
      // Every key is compared, each in constant time: neither which key matched nor how
      // much of a hash did shows in the time the answer takes.
      let found: KeyEntry | undefined;
      for (const { entry, digest: expected } of held) if (timingSafeEqual(digest, expected)) found = entry;
      if (!found) return undefined;
      return { id: found.id, agents: found.agents, approve: found.approve, ...(found.requestsPerMinute === undefined ? {} : { requestsPerMinute: found.requestsPerMinute }) };
    },
  };
}

/** A new key: the secret to hand over once, and the entry (its hash only) for the keys file. */
export function newGatewayKey(spec: { id: string; agents: readonly string[] | '*'; approve?: boolean; requestsPerMinute?: number }): { secret: string; entry: KeyEntry } {
  const secret = `${KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
  const parsed = KeyEntrySchema.safeParse({ ...spec, agents: spec.agents === '*' ? '*' : [...spec.agents], sha256: sha256Hex(secret) });
  if (!parsed.success) throw new ConfigError(`invalid key: ${describeIssues(parsed.error)}`);
  return { secret, entry: parsed.data };
}

/** Reads and checks a keys file; a bad one is one line naming the file and the field, never a hash. */
export function readKeysFile(file: string, variable = 'AGENT_GATEWAY_KEYS_FILE'): KeyEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(`${variable}: ${file} is not JSON`);
  }
  const parsed = KeysFileSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${variable}: ${file}: ${describeIssues(parsed.error)}`);
  return parsed.data.keys;
}

/** Adds a key to a keys file (created when absent, owner-only); an id already there is refused. */
export function addKeyToFile(file: string, entry: KeyEntry): void {
  const keys = existsSync(file) ? readKeysFile(file, '--file') : [];
  if (keys.some((k) => k.id === entry.id)) throw new ConfigError(`--id: ${file} already has a key ${JSON.stringify(entry.id)}`);
  writeFileSync(file, `${JSON.stringify({ keys: [...keys, entry] }, null, 2)}\n`, { mode: 0o600 });
}
