import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter, type DataConverter, type LoadedDataConverter } from '@temporalio/common';
import { AesGcmCodec } from './aes-gcm-codec';
import type { EncryptionKey } from './encryption-key';
import { failureConverter } from './failure-converter';

export { encryptionKeyFromEnv, type EncryptionKey } from './encryption-key';

/**
 * The module that exports `failureConverter`, for the worker and its workflow bundle: `.ts`
 * beside the sources, `.js` in the compiled `dist/` that `npm run worker` prefers.
 */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL(`./failure-converter${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * The worker's data converter when encryption is on: the codec for payloads and, by path,
 * a failure converter that moves failure messages into (encrypted) payloads. By path
 * because the workflow bundle has to include it; so a worker given a prebuilt
 * `workflowBundle` must have built it with the same `failureConverterPath`.
 */
export function workerDataConverter(key: EncryptionKey): DataConverter {
  return { payloadCodecs: [new AesGcmCodec(key)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/**
 * The client's: the same codec and failure encoding, as objects, so no module is loaded
 * by path (a client may run where `.ts` files cannot be required, e.g. under vitest).
 */
export function clientDataConverter(key: EncryptionKey): LoadedDataConverter {
  return {
    payloadConverter: defaultPayloadConverter,
    failureConverter,
    payloadCodecs: [new AesGcmCodec(key)],
  };
}
