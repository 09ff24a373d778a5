/**
 * Where each connection setting came from, so an error names the thing the user wrote:
 * the environment variable when it is set, else the key of the `temporal.toml` profile
 * when the profile has it (variables override the profile, as in the `temporal` CLI),
 * else the variable one would set.
 */
export type ConnectionSetting = 'address' | 'namespace' | 'apiKey' | 'tls' | 'clientCert' | 'clientKey' | 'serverCaCert' | 'serverName';

const ENV_NAMES: Record<ConnectionSetting, readonly [string, ...string[]]> = {
  address: ['TEMPORAL_ADDRESS'],
  namespace: ['TEMPORAL_NAMESPACE'],
  apiKey: ['TEMPORAL_API_KEY'],
  tls: ['TEMPORAL_TLS'],
  clientCert: ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
  clientKey: ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
  serverCaCert: ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
  serverName: ['TEMPORAL_TLS_SERVER_NAME'],
};

/** Keys of a `[profile.NAME]` table; `_path` and `_data` spellings are both accepted there. */
const TOML_KEYS: Record<ConnectionSetting, readonly string[]> = {
  address: ['address'],
  namespace: ['namespace'],
  apiKey: ['api_key'],
  tls: ['tls.disabled'],
  clientCert: ['tls.client_cert_path', 'tls.client_cert_data'],
  clientKey: ['tls.client_key_path', 'tls.client_key_data'],
  serverCaCert: ['tls.server_ca_cert_path', 'tls.server_ca_cert_data'],
  serverName: ['tls.server_name'],
};

export type SettingNamer = (setting: ConnectionSetting) => string;

/**
 * @param fileKeys the dotted keys the file's profile sets (`address`, `tls.server_name`, …)
 */
export function settingNamer(env: Record<string, string>, profile: string, fileKeys: ReadonlySet<string>): SettingNamer {
  return (setting) => {
    const fromEnv = ENV_NAMES[setting].find((name) => env[name] !== undefined);
    if (fromEnv) return fromEnv;
    const fromFile = TOML_KEYS[setting].find((key) => fileKeys.has(key));
    return fromFile ? `temporal.toml [profile.${profile}] ${fromFile}` : ENV_NAMES[setting][0];
  };
}
