import http2, { type ClientHttp2Session, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface TlsProxyOptions {
  /** `host:port` of the plaintext gRPC server behind the proxy (a dev server). */
  upstream: string;
  cert: Buffer;
  key: Buffer;
  /** When set, a client certificate signed by this CA is required (mTLS). */
  clientCa?: Buffer;
  /** When set, every call must carry `authorization: Bearer <apiKey>`, as Temporal Cloud checks it. */
  apiKey?: string;
}

export interface TlsProxy {
  /** `127.0.0.1:port` */
  address: string;
  /** Calls refused for a missing or wrong `authorization` header. */
  readonly refusedCalls: number;
  /** Calls passed on to the server behind the proxy. */
  readonly forwardedCalls: number;
  close(): Promise<void>;
}

const GRPC_UNAUTHENTICATED = '16';
const GRPC_UNAVAILABLE = '14';

/**
 * A TLS-terminating gRPC proxy on loopback, in front of a dev server that speaks only
 * plaintext: what a secured cluster or Temporal Cloud looks like to the worker and the
 * client. It is a real HTTP/2 server (ALPN h2), so the TLS handshake, the client
 * certificate check and the `authorization` header are the ones a real endpoint sees.
 */
export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  let upstream: ClientHttp2Session | undefined;
  const upstreamSession = (): ClientHttp2Session => {
    if (!upstream || upstream.closed || upstream.destroyed) {
      upstream = http2.connect(`http://${options.upstream}`);
      upstream.on('error', () => undefined);
    }
    return upstream;
  };
  const sessions = new Set<ServerHttp2Session>();
  let refusedCalls = 0;
  let forwardedCalls = 0;

  const server = http2.createSecureServer({
    cert: options.cert,
    key: options.key,
    allowHTTP1: false,
    ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (options.apiKey !== undefined && headers.authorization !== `Bearer ${options.apiKey}`) {
      refusedCalls++;
      endWithStatus(stream, GRPC_UNAUTHENTICATED, 'Request unauthorized');
      return;
    }
    forwardedCalls++;
    forward(stream, headers, upstreamSession());
  });
  // A refused handshake (no client certificate, an untrusted CA) is what some tests are about.
  server.on('tlsClientError', () => undefined);
  server.on('sessionError', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    get refusedCalls() {
      return refusedCalls;
    },
    get forwardedCalls() {
      return forwardedCalls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Long polls would hold close() for a minute: end the sessions now.
        for (const session of sessions) session.destroy();
        upstream?.destroy();
      }),
  };
}

/** One call, both ways, with gRPC's trailers (status) carried after the body. */
function forward(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, upstream: ClientHttp2Session): void {
  const { ':method': method, ':path': path, ':authority': _authority, ':scheme': _scheme, ...rest } = headers;
  let request: http2.ClientHttp2Stream;
  try {
    request = upstream.request({ ...rest, ':method': method ?? 'POST', ':path': path ?? '/' });
  } catch {
    endWithStatus(stream, GRPC_UNAVAILABLE, 'upstream unavailable');
    return;
  }
  let trailers: IncomingHttpHeaders = {};
  request.on('response', (responseHeaders) => {
    if (stream.destroyed) return;
    // A trailers-only response (an error status) ends the call in its headers.
    if (responseHeaders['grpc-status'] !== undefined) {
      stream.respond(responseHeaders, { endStream: true });
      request.close();
      return;
    }
    stream.respond(responseHeaders, { waitForTrailers: true });
    request.pipe(stream);
  });
  request.on('trailers', (received) => {
    trailers = received;
  });
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  request.on('error', () => {
    if (!stream.headersSent && !stream.destroyed) endWithStatus(stream, GRPC_UNAVAILABLE, 'upstream unavailable');
    else stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  });
  stream.on('close', () => {
    if (!request.closed) request.close(http2.constants.NGHTTP2_CANCEL);
  });
  stream.pipe(request);
}

function endWithStatus(stream: ServerHttp2Stream, status: string, message: string): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': status, 'grpc-message': message }, { endStream: true });
}
