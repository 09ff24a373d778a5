import { NativeConnection } from '@temporalio/worker';
import type { TemporalConnectionConfig } from './connection-config';
import { connectionFailure } from './connection-failure';

/**
 * The worker's connection (`@temporalio/worker`, the Rust core). A separate file from the
 * client's so the CLI never loads the native bridge. Fails once, in one line.
 */
export async function connectWorkerConnection(config: TemporalConnectionConfig): Promise<NativeConnection> {
  if (config.plaintextKeyWarning) console.error(config.plaintextKeyWarning);
  try {
    return await NativeConnection.connect(config.options);
  } catch (error) {
    throw await connectionFailure(config, error);
  }
}
