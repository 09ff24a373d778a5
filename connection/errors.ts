/**
 * The settings were well formed, but the server could not be reached or refused them
 * (TLS handshake, API key, unknown namespace). One line, naming the setting to look at.
 */
export class ConnectionFailedError extends Error {
  override name = 'ConnectionFailedError';
}
