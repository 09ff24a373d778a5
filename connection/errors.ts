/**
 * A connection setting that cannot work: a bad value, a missing or unreadable file, a key
 * that does not belong to its certificate. The message is one line that names the setting
 * (the variable, or the `temporal.toml` key) and never repeats its value.
 */
export class ConnectionConfigError extends Error {
  override name = 'ConnectionConfigError';
}

/**
 * The settings were well formed, but the server could not be reached or refused them
 * (TLS handshake, API key, unknown namespace). One line, naming the setting to look at.
 */
export class ConnectionFailedError extends Error {
  override name = 'ConnectionFailedError';
}
