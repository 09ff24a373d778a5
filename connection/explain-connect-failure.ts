import type { TemporalConnectionConfig } from './connection-config';

/**
 * The one line to print when a connection attempt fails, naming the setting to look at.
 * The SDK's message follows (first line only); it carries no key, as keys travel in
 * headers, never in error text.
 */
export function explainConnectFailure(config: TemporalConnectionConfig, error: unknown): string {
  const name = config.settingName;
  const detail = firstLine(causeMessages(error));
  if (isUnauthenticated(error, detail)) {
    return config.usesApiKey
      ? `${name('apiKey')}: the Temporal server at ${config.address} refused the API key (${detail})`
      : `the Temporal server at ${config.address} asks for credentials: set TEMPORAL_API_KEY, or a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH) (${detail})`;
  }
  if (config.security !== 'plaintext') {
    if (CERTIFICATE_REQUIRED.test(detail)) {
      return `the Temporal server at ${config.address} requires a client certificate: set ${name('clientCert')} and ${name('clientKey')} (${detail})`;
    }
    if (UNTRUSTED_SERVER.test(detail)) {
      return `${name('serverCaCert')}: the certificate of the Temporal server at ${config.address} is not signed by a trusted CA (${detail})`;
    }
    if (TLS_FAILURE.test(detail)) {
      return `TLS with the Temporal server at ${config.address} failed; check ${name('serverCaCert')}, ${name('serverName')}, ${name('clientCert')} (${detail})`;
    }
  }
  return `cannot reach the Temporal server at ${config.address} (${name('address')}): ${detail}`;
}

const CERTIFICATE_REQUIRED = /CertificateRequired|certificate required|handshake failure/i;
const UNTRUSTED_SERVER = /UnknownIssuer|local issuer|self[- ]signed|unable to verify|certificate verify failed/i;
const TLS_FAILURE = /certificate|handshake|tls|ssl|UnknownIssuer|alert|peer/i;
const GRPC_UNAUTHENTICATED = 16;
const GRPC_PERMISSION_DENIED = 7;

function isUnauthenticated(error: unknown, detail: string): boolean {
  const code = grpcCodeOf(error);
  return code === GRPC_UNAUTHENTICATED || code === GRPC_PERMISSION_DENIED || /unauthenticated|unauthorized|permission denied/i.test(detail);
}

function grpcCodeOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

function causeMessages(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const message = e instanceof Error ? e.message : String(e);
    if (message && !messages.some((m) => m.includes(message))) messages.push(message);
  }
  return messages.join(': ');
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() || 'no answer';
}
