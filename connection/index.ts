/**
 * How every process of this project reaches Temporal. Import `connect-worker` directly
 * where the native bridge is wanted; this entry stays light for the CLI.
 */
export { loadConnectionConfig, type ConnectionOptions, type TemporalConnectionConfig } from './connection-config';
export { connectClientConnection } from './connect-client';
export { ConnectionConfigError, ConnectionFailedError } from './errors';
