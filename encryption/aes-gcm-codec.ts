import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
// A CommonJS module built by protobufjs: Node's ESM loader sees only its default export.
import proto from '@temporalio/proto';
import { ENCRYPTION_KEY_ENV, ENCRYPTION_KEY_ID_ENV, PREVIOUS_KEYS_ENV, type DecryptionKey, type EncryptionKey } from './encryption-key';

/**
 * A PayloadCodec that encrypts every payload with AES-256-GCM before it leaves the process,
 * so the Temporal server (its database, its UI without a codec server, its backups) holds
 * ciphertext only: prompts, model output, tool arguments and results, failure messages.
 *
 * The whole payload (metadata and data) is protobuf-encoded and encrypted, so not even the
 * original encoding is visible. The stored payload's metadata says `binary/encrypted` and
 * names the key id; its data is `nonce (12 bytes) | ciphertext | tag (16 bytes)`. The key id
 * is the additional authenticated data: a payload cannot be passed off as another key's.
 * After a rotation the previous keys (`AGENT_ENCRYPTION_PREVIOUS_KEYS`) decrypt what they
 * wrote, picked by that id; only the current key encrypts.
 *
 * What stays in the clear is what Temporal must read itself and is no payload: workflow and
 * activity type names, ids, task queues, timeouts, failure types (`auth_error`, …); and two
 * kinds of payload the server reads: search attributes (AgentStatus, AgentStepCount,
 * AgentModel, TemporalChangeVersion) and the marker of a `patched()` change (its id). The
 * activity and timer summaries are payloads, so they are encrypted too.
 */

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const { Payload: PayloadProto } = proto.temporal.api.common.v1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/** A payload this process cannot decrypt: another key, or damaged. Never retried into success. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

export class AesGcmCodec implements PayloadCodec {
  readonly #key: EncryptionKey;
  /** Every key that decrypts, by id: the current one and the previous ones. */
  readonly #decrypting: ReadonlyMap<string, DecryptionKey>;

  constructor(key: EncryptionKey) {
    const ring = [key, ...(key.previous ?? [])];
    for (const k of ring) if (k.bytes.length !== 32) throw new Error(`an AES-256 key is 32 bytes, got ${k.bytes.length} for key id "${k.id}"`);
    this.#key = key;
    this.#decrypting = new Map(ring.map((k) => [k.id, k]));
  }

  get keyId(): string {
    return this.#key.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv(ALGORITHM, this.#key.bytes, nonce);
      cipher.setAAD(utf8(this.#key.id));
      const plain = PayloadProto.encode(payload).finish();
      const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(this.#key.id) }, data };
    });
  }

  /**
   * Payloads that are not encrypted pass through unchanged: history written before
   * encryption was switched on stays readable.
   */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]) ?? '(none)';
      const key = this.#decrypting.get(keyId);
      if (key === undefined) {
        throw new PayloadDecryptionError(
          `cannot decrypt a payload encrypted with key id "${keyId}": this process has ${ENCRYPTION_KEY_ID_ENV}="${this.#key.id}" and no such id in ${PREVIOUS_KEYS_ENV}. Set the key that id names, or add it there as id=key.`,
        );
      }
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadDecryptionError(`cannot decrypt a payload with key id "${keyId}": it is ${data.length} bytes, too short to be one`);
      const decipher = createDecipheriv(ALGORITHM, key.bytes, data.subarray(0, NONCE_BYTES));
      decipher.setAAD(utf8(keyId));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      } catch {
        // GCM authentication failed: a different key under the same id, or damaged data.
        const holder = key === this.#key ? ENCRYPTION_KEY_ENV : `the key ${PREVIOUS_KEYS_ENV} gives it`;
        throw new PayloadDecryptionError(`cannot decrypt a payload with key id "${keyId}": ${holder} is not the key it was encrypted with (or the payload was altered)`);
      }
      return PayloadProto.decode(plain);
    });
  }
}
