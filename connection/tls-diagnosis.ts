import { isIP } from 'node:net';
import { connect } from 'node:tls';
import type { TemporalConnectionConfig } from './connection-config';

/** How long a refused client certificate takes to show: TLS 1.3 servers send the alert after the handshake. */
const ALERT_WAIT_MS = 300;
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Why a TLS connection to the server fails, found with one plain TLS handshake using the
 * same CA, server name and client certificate. Needed because the client's gRPC library
 * reports any handshake failure as "Failed to connect before the deadline". Undefined when
 * the handshake succeeds or the server does not answer.
 */
export function diagnoseTls(config: TemporalConnectionConfig): Promise<string | undefined> {
  const tls = typeof config.options.tls === 'object' ? config.options.tls : {};
  const separator = config.address.lastIndexOf(':');
  const host = config.address.slice(0, separator).replace(/^\[|\]$/g, '');
  const port = Number(config.address.slice(separator + 1));
  const servername = tls.serverNameOverride ?? (isIP(host) ? undefined : host);
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port,
      ALPNProtocols: ['h2'],
      ...(servername ? { servername } : {}),
      ...(tls.serverRootCACertificate ? { ca: Buffer.from(tls.serverRootCACertificate) } : {}),
      ...(tls.clientCertPair ? { cert: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) } : {}),
    });
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(undefined), PROBE_TIMEOUT_MS);
    socket.once('secureConnect', () => setTimeout(() => done(undefined), ALERT_WAIT_MS));
    socket.once('error', (error) => done(error.message));
  });
}
