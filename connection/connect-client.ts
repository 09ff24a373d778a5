import { Connection } from '@temporalio/client';
import type { TemporalConnectionConfig } from './connection-config';
import { connectionFailure } from './connection-failure';

/**
 * A client connection (`@temporalio/client`), for the CLI, `npm start` and the benchmark.
 * Fails once, in one line, instead of retrying: a wrong address or key does not get
 * better by waiting.
 */
export async function connectClientConnection(config: TemporalConnectionConfig, connectTimeoutMs = 5_000): Promise<Connection> {
  if (config.plaintextKeyWarning) console.error(config.plaintextKeyWarning);
  try {
    return await Connection.connect({ ...config.options, connectTimeout: connectTimeoutMs });
  } catch (error) {
    throw await connectionFailure(config, error);
  }
}
