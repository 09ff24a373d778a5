import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConnectionConfig } from '../connection/connection-config';
import { ConfigError } from '../config/config-error';
import { makeTestCertificates, type TestCertificates } from './support/test-certificates';
import { runEntry } from './support/cli';

let certs: TestCertificates;
let dir: string;
beforeAll(async () => {
  certs = await makeTestCertificates();
  dir = await mkdtemp(path.join(tmpdir(), 'agent-envconfig-'));
});
afterAll(async () => {
  await certs?.remove();
  await rm(dir, { recursive: true, force: true });
});

async function tomlFile(name: string, lines: string[]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, lines.join('\n'));
  return file;
}

/** The config error for `env`, asserting it is one line that does not contain `secret`. */
function errorFor(env: Record<string, string>, secret?: string): string {
  try {
    loadConnectionConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    if (secret !== undefined) expect(message).not.toContain(secret);
    return message;
  }
  throw new Error('expected a ConfigError');
}

describe('connection settings', () => {
  it('defaults to localhost:7233, namespace default, plaintext, no key', () => {
    const config = loadConnectionConfig({});
    expect(config).toMatchObject({ address: 'localhost:7233', namespace: 'default', security: 'plaintext', usesApiKey: false });
    expect(config.options).toEqual({ address: 'localhost:7233' });
  });

  it('turns TLS on with an API key, as Temporal Cloud expects', () => {
    const config = loadConnectionConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'k-1' });
    expect(config).toMatchObject({ address: 'ns.acct.tmprl.cloud:7233', namespace: 'ns.acct', security: 'tls', usesApiKey: true });
    expect(config.options).toMatchObject({ apiKey: 'k-1', tls: true });
  });

  it('warns, without the key, when TEMPORAL_TLS=false would send an API key in the clear to a host that is not loopback', () => {
    const secret = 'tmprl-secret-key-value';
    const config = loadConnectionConfig({ TEMPORAL_ADDRESS: 'temporal.example.com:7233', TEMPORAL_API_KEY: secret, TEMPORAL_TLS: 'false' });
    expect(config.security).toBe('plaintext');
    expect(config.plaintextKeyWarning).toBe(
      'warning: TEMPORAL_API_KEY goes without TLS to temporal.example.com:7233 (TEMPORAL_TLS turns it off), so anyone on the way can read it: turn TLS on, or reach the server on a loopback address',
    );
    expect(config.plaintextKeyWarning).not.toContain(secret);
    // On loopback the key never leaves the machine; with TLS, or without a key, there is nothing to warn of.
    for (const address of ['localhost:7233', '127.0.0.1:7233', '127.8.9.10:7233', '[::1]:7233']) {
      expect(loadConnectionConfig({ TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY: secret, TEMPORAL_TLS: 'false' }).plaintextKeyWarning, address).toBeUndefined();
    }
    expect(loadConnectionConfig({ TEMPORAL_ADDRESS: 'temporal.example.com:7233', TEMPORAL_API_KEY: secret }).plaintextKeyWarning).toBeUndefined();
    expect(loadConnectionConfig({ TEMPORAL_ADDRESS: 'temporal.example.com:7233', TEMPORAL_TLS: 'false' }).plaintextKeyWarning).toBeUndefined();
  });

  it('prints that warning on stderr when the client connects', async () => {
    // 192.0.2.0/24 is reserved for documentation: nothing answers there, so the command then fails to connect.
    const result = await runEntry('client/main.ts', ['list'], { TEMPORAL_ADDRESS: '192.0.2.1:7233', TEMPORAL_API_KEY: 'tmprl-secret-key-value', TEMPORAL_TLS: 'false' });
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^warning: TEMPORAL_API_KEY goes without TLS to 192\.0\.2\.1:7233 /);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('tmprl-secret-key-value');
  });

  it('reads a temporal.toml profile named by TEMPORAL_PROFILE, and lets the environment override it', async () => {
    const file = await tomlFile('profiles.toml', [
      '[profile.default]',
      'address = "localhost:7233"',
      '[profile.prod]',
      'address = "prod.example.com:7233"',
      'namespace = "agents"',
      '[profile.prod.tls]',
      `client_cert_path = "${certs.clientCert}"`,
      `client_key_path = "${certs.clientKey}"`,
    ]);
    expect(loadConnectionConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })).toMatchObject({ address: 'prod.example.com:7233', namespace: 'agents', security: 'mtls' });
    expect(loadConnectionConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'other' }).namespace).toBe('other');
    expect(loadConnectionConfig({ TEMPORAL_CONFIG_FILE: file }).address).toBe('localhost:7233');
  });

  it.each([
    [{ TEMPORAL_ADDRESS: 'not an address' }, /^TEMPORAL_ADDRESS: must be host:port$/],
    [{ TEMPORAL_TLS: 'yes' }, /^TEMPORAL_TLS: must be true or false$/],
    [{ TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem', TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/client.key' }, /^TEMPORAL_TLS_CLIENT_CERT_PATH: no such file$/],
    [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem' }, /^TEMPORAL_TLS_SERVER_CA_CERT_PATH: no such file$/],
    [{ TEMPORAL_PROFILE: 'nope' }, /^TEMPORAL_PROFILE: no such profile in temporal.toml$/],
    [{ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }, /^TEMPORAL_CONFIG_FILE: no readable file there$/],
  ])('names the setting in one line, without its value: %o', (env, pattern) => {
    const message = errorFor(env);
    expect(message).toMatch(pattern);
    for (const value of Object.values(env)) if (!/^[A-Z_]+$/.test(value)) expect(message).not.toContain(value);
  });

  it('checks the TLS files before connecting: a certificate without its key, a key of another certificate, a file that is not PEM', () => {
    expect(errorFor({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert })).toBe('TEMPORAL_TLS_CLIENT_CERT_PATH is set, but no client key (TEMPORAL_TLS_CLIENT_KEY_PATH)');
    expect(errorFor({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.strayKey })).toBe(
      'TEMPORAL_TLS_CLIENT_KEY_PATH: the key does not belong to the client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH)',
    );
    expect(errorFor({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.clientKey })).toBe('TEMPORAL_TLS_SERVER_CA_CERT_PATH: not a PEM certificate');
  });

  it('names the temporal.toml key when the profile set it, and never quotes the file (it may hold an API key)', async () => {
    const missingCa = await tomlFile('missing-ca.toml', ['[profile.default.tls]', 'server_ca_cert_path = "/nonexistent/ca.pem"']);
    expect(errorFor({ TEMPORAL_CONFIG_FILE: missingCa })).toBe('temporal.toml [profile.default] tls.server_ca_cert_path: no such file');
    const secret = 'sk-not-a-real-key-0123456789';
    const broken = await tomlFile('broken.toml', ['[profile.default]', `api_key = "${secret}`, 'address = ']);
    expect(errorFor({ TEMPORAL_CONFIG_FILE: broken }, secret)).toMatch(/^TEMPORAL_CONFIG_FILE: not valid TOML \(line \d+\)$/);
    const badKey = await tomlFile('bad-key.toml', ['[profile.default]', `api_key = "${secret}\\n"`]);
    expect(errorFor({ TEMPORAL_CONFIG_FILE: badKey }, secret)).toBe('temporal.toml [profile.default] api_key: must be one line of printable characters');
  });
});
