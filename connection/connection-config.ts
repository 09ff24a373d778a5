import { accessSync, constants } from 'node:fs';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';
import { z } from 'zod';
import { ConfigError } from '../config/config-error';
import { settingNamer, type ConnectionSetting, type SettingNamer } from './setting-names';
import { loadTlsMaterial } from './tls-material';

/**
 * How this project reaches Temporal: worker, client, `npm start` and the benchmark all
 * read it here, by Temporal's own conventions (`@temporalio/envconfig`, as the `temporal`
 * CLI does): a profile of `temporal.toml` (`TEMPORAL_CONFIG_FILE`, default
 * `~/.config/temporalio/temporal.toml`; `TEMPORAL_PROFILE`, default `default`), overridden
 * by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*` and
 * `TEMPORAL_GRPC_META_*`.
 */
export interface TemporalConnectionConfig {
  /** `host:port` of the frontend. Default `localhost:7233`. */
  readonly address: string;
  /** Default `default`. */
  readonly namespace: string;
  /** For `Connection.connect` (client) and `NativeConnection.connect` (worker) alike. */
  readonly options: ConnectionOptions;
  /** How the connection is secured, for a log line: never a key or a file's contents. */
  readonly security: 'plaintext' | 'tls' | 'mtls';
  readonly usesApiKey: boolean;
  /**
   * Said on stderr when connecting: an API key is about to travel in the clear to a host
   * other than this machine (TLS turned off by hand). Never holds the key.
   */
  readonly plaintextKeyWarning?: string;
  /** The name of the setting behind each part, for error lines. */
  readonly settingName: SettingNamer;
}

export interface ConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** `host:port`, `[v6]:port`; a Cloud endpoint is `ns.acct.tmprl.cloud:7233`. */
const ADDRESS = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/]+):\d{1,5}$/;
/** A header value: one line of visible ASCII (a key pasted with its newline would be refused by gRPC). */
const HEADER_VALUE = /^[\x21-\x7e]+$/;
const BOOLEAN = ['true', 'false', '1', '0'] as const;

const ProfileSchema = z.object({
  address: z.string().regex(ADDRESS, { message: 'must be host:port' }).default('localhost:7233'),
  namespace: z.string().min(1).default('default'),
  apiKey: z.string().regex(HEADER_VALUE, { message: 'must be one line of printable characters' }).optional(),
});

const PROFILE_FIELDS: Record<keyof z.input<typeof ProfileSchema>, ConnectionSetting> = { address: 'address', namespace: 'namespace', apiKey: 'apiKey' };

/**
 * Reads, checks and resolves the connection settings. Throws `ConfigError` with
 * one line naming every setting at fault.
 *
 * @param env the environment (default `process.env`); a blank variable counts as unset.
 */
export function loadConnectionConfig(env: Record<string, string | undefined> = process.env): TemporalConnectionConfig {
  const vars = setVariables(env);
  const profileName = vars.TEMPORAL_PROFILE ?? 'default';
  if (vars.TEMPORAL_TLS !== undefined && !(BOOLEAN as readonly string[]).includes(vars.TEMPORAL_TLS)) {
    throw new ConfigError('TEMPORAL_TLS: must be true or false');
  }
  const fileProfile = readProfile(vars, profileName, { disableEnv: true });
  const profile = readProfile(vars, profileName, {});
  const name = settingNamer(vars, profileName, keysOf(fileProfile));
  const parsed = ProfileSchema.safeParse({ address: profile.address, namespace: profile.namespace, apiKey: profile.apiKey });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${name(PROFILE_FIELDS[issue.path[0] as keyof typeof PROFILE_FIELDS] ?? 'address')}: ${issue.message}`);
    throw new ConfigError([...new Set(lines)].join('; '));
  }
  const { address, namespace, apiKey } = parsed.data;
  const tls = profile.tls && loadTlsMaterial(profile.tls, name);
  const { connectionOptions } = toClientOptions({ ...profile, address, namespace, ...(tls ? { tls } : {}) });
  const options: ConnectionOptions = {
    address,
    ...(connectionOptions.tls === undefined || connectionOptions.tls === null ? {} : { tls: connectionOptions.tls }),
    ...(apiKey ? { apiKey } : {}),
    ...(profile.grpcMeta ? { metadata: profile.grpcMeta } : {}),
  };
  const tlsOn = options.tls !== undefined && options.tls !== false;
  const mutual = typeof options.tls === 'object' && options.tls.clientCertPair !== undefined;
  const exposed = apiKey !== undefined && !tlsOn && !isLoopback(address);
  return {
    address,
    namespace,
    options,
    security: mutual ? 'mtls' : tlsOn ? 'tls' : 'plaintext',
    usesApiKey: apiKey !== undefined,
    settingName: name,
    ...(exposed
      ? {
          plaintextKeyWarning: `warning: ${name('apiKey')} goes without TLS to ${address} (${name('tls')} turns it off), so anyone on the way can read it: turn TLS on, or reach the server on a loopback address`,
        }
      : {}),
  };
}

/** `localhost`, 127.0.0.0/8 and `[::1]`: a key sent there does not leave the machine. */
function isLoopback(address: string): boolean {
  const host = address.slice(0, address.lastIndexOf(':')).toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The variables that are set; `TEMPORAL_GRPC_META_X=` is kept, since blank removes a header there. */
function setVariables(env: Record<string, string | undefined>): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && (value !== '' || key.startsWith('TEMPORAL_GRPC_META_'))) vars[key] = value;
  }
  return vars;
}

/**
 * The profile with the environment applied. envconfig silently skips a config file that
 * does not exist; a `TEMPORAL_CONFIG_FILE` the user named must exist, so that is checked
 * first. Its own errors are rephrased: a TOML parser's message quotes the offending line,
 * which may hold an API key.
 */
function readProfile(vars: Record<string, string>, profileName: string, options: { disableEnv?: boolean }): ClientConfigProfile {
  const file = vars.TEMPORAL_CONFIG_FILE;
  try {
    if (file !== undefined) readableOrThrow(file);
    return loadClientConfigProfile({ ...options, overrideEnvVars: vars, ...(vars.TEMPORAL_PROFILE ? { profile: vars.TEMPORAL_PROFILE } : {}) });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const where = file === undefined ? 'temporal.toml' : 'TEMPORAL_CONFIG_FILE';
    if (/^Profile '.*' not found/.test(message)) throw new ConfigError(`TEMPORAL_PROFILE: no such profile in ${where}`);
    const line = (error as { line?: unknown }).line;
    if (typeof line === 'number') throw new ConfigError(`${where}: not valid TOML (line ${line})`);
    if (/^Cannot specify both/.test(message)) throw new ConfigError(`${where} [profile.${profileName}]: ${message}`);
    throw new ConfigError(`${where}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

function readableOrThrow(file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch {
    throw new ConfigError('TEMPORAL_CONFIG_FILE: no readable file there');
  }
}

/** The dotted `temporal.toml` keys a profile sets, to name them in errors. */
function keysOf(profile: ClientConfigProfile): Set<string> {
  const keys = new Set<string>();
  if (profile.address !== undefined) keys.add('address');
  if (profile.namespace !== undefined) keys.add('namespace');
  if (profile.apiKey !== undefined) keys.add('api_key');
  const tls = profile.tls;
  if (tls?.disabled !== undefined) keys.add('tls.disabled');
  if (tls?.serverName !== undefined) keys.add('tls.server_name');
  for (const [field, key] of [['clientCert', 'client_cert'], ['clientKey', 'client_key'], ['serverCACert', 'server_ca_cert']] as const) {
    const source = tls?.[field];
    if (source) keys.add(`tls.${key}_${'path' in source ? 'path' : 'data'}`);
  }
  return keys;
}
