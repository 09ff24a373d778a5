import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClientConfigTLS, ConfigDataSource } from '@temporalio/envconfig';
import { ConfigError } from '../config/config-error';
import type { SettingNamer } from './setting-names';

/**
 * Reads and checks the TLS files a profile names, before any connection is tried: the
 * SDK would read them lazily and fail deep inside the handshake (a missing file as a bare
 * ENOENT, a mismatched key as a TLS alert from the server). Returns the same settings with
 * the files' bytes in place of their paths, so nothing is read twice.
 */
export function loadTlsMaterial(tls: ClientConfigTLS, name: SettingNamer): ClientConfigTLS {
  if (tls.disabled === true) return tls;
  const serverCaCert = tls.serverCACert && readPem(tls.serverCACert, name('serverCaCert'));
  const clientCert = tls.clientCert && readPem(tls.clientCert, name('clientCert'));
  const clientKey = tls.clientKey && readPem(tls.clientKey, name('clientKey'));
  if (serverCaCert) certificateOf(serverCaCert, name('serverCaCert'));
  if (clientCert && !clientKey) throw new ConfigError(`${name('clientCert')} is set, but no client key (${name('clientKey')})`);
  if (clientKey && !clientCert) throw new ConfigError(`${name('clientKey')} is set, but no client certificate (${name('clientCert')})`);
  if (clientCert && clientKey) {
    const certificate = certificateOf(clientCert, name('clientCert'));
    const key = privateKeyOf(clientKey, name('clientKey'));
    if (!certificate.checkPrivateKey(key)) {
      throw new ConfigError(`${name('clientKey')}: the key does not belong to the client certificate (${name('clientCert')})`);
    }
  }
  return {
    ...tls,
    ...(serverCaCert ? { serverCACert: { data: serverCaCert } } : {}),
    ...(clientCert ? { clientCert: { data: clientCert } } : {}),
    ...(clientKey ? { clientKey: { data: clientKey } } : {}),
  };
}

function readPem(source: ConfigDataSource, setting: string): Uint8Array {
  if (!('path' in source)) return typeof source.data === 'string' ? Buffer.from(source.data) : source.data;
  try {
    return readFileSync(source.path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'the file cannot be read (permissions)' : `the file cannot be read (${code ?? 'error'})`;
    throw new ConfigError(`${setting}: ${why}`);
  }
}

function certificateOf(pem: Uint8Array, setting: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new ConfigError(`${setting}: not a PEM certificate`);
  }
}

function privateKeyOf(pem: Uint8Array, setting: string): KeyObject {
  try {
    return createPrivateKey(Buffer.from(pem));
  } catch {
    throw new ConfigError(`${setting}: not a PEM private key (or one protected by a passphrase)`);
  }
}
