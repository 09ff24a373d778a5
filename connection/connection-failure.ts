import type { TemporalConnectionConfig } from './connection-config';
import { ConnectionFailedError } from './errors';
import { explainConnectFailure } from './explain-connect-failure';
import { diagnoseTls } from './tls-diagnosis';

/**
 * A failed connection as its one line. Over TLS the reason comes from a plain handshake of
 * our own when that handshake fails: the client's gRPC library reports any handshake
 * failure as a deadline, and the worker's core may report a refused client certificate as a
 * broken pipe, depending on whether the server's alert or its closed socket comes first.
 */
export async function connectionFailure(config: TemporalConnectionConfig, error: unknown): Promise<ConnectionFailedError> {
  const tlsReason = config.security === 'plaintext' ? undefined : await diagnoseTls(config);
  return new ConnectionFailedError(explainConnectFailure(config, tlsReason === undefined ? error : new Error(tlsReason)));
}
