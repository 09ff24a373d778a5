/**
 * `npm run codec-server`: the Temporal UI's codec endpoint for encrypted sessions. The UI
 * (and `temporal workflow show --codec-endpoint`) sends the payloads it displays to
 * `POST /decode` and shows the plain text it gets back; `POST /encode` serves the UI's
 * "send signal / start workflow" forms. Point the UI at it with
 * `temporal server start-dev --ui-codec-endpoint http://localhost:8888`, or in the UI's
 * settings ("Codec Server").
 *
 * It decrypts anything it is sent, so it answers only its own callers: it listens on
 * loopback only; answers CORS preflights for the configured UI origin only; answers only a
 * request whose Host names it (a web page that rebinds its own DNS name to 127.0.0.1 sends
 * its own name, so it cannot use the server as a decryption oracle); takes only
 * `Content-Type: application/json` (a cross-origin form or text/plain post needs no
 * preflight, JSON does); and, with CODEC_SERVER_TOKEN set, only `Authorization: Bearer
 * <token>`, which the CLI sends with `--codec-auth` (TEMPORAL_CODEC_AUTH). The UI cannot
 * send a fixed token (with TEMPORAL_CODEC_PASS_ACCESS_TOKEN it passes its signed-in user's
 * own access token, which this server does not verify), so a server the UI uses runs
 * without one and relies on the checks before it. It needs the same AGENT_ENCRYPTION_KEY and
 * AGENT_ENCRYPTION_KEY_ID as the worker, and its AGENT_ENCRYPTION_PREVIOUS_KEYS.
 *
 * Environment: CODEC_SERVER_PORT (8888), CODEC_SERVER_CORS_ORIGINS (http://localhost:8233,
 * comma-separated: the UI's origin as the browser sends it), CODEC_SERVER_HOSTS (names it
 * is also reached by, e.g. through a proxy; comma-separated), CODEC_SERVER_TOKEN (unset:
 * no token asked).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { AesGcmCodec } from '../encryption/aes-gcm-codec';
import { ConfigError, describeEnvIssues } from '../config/config-error';
import { encryptionKeyFromEnv } from '../encryption/encryption-key';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Origins allowed to call it from a browser. Default: the dev server's UI, http://localhost:8233. */
  corsOrigins?: readonly string[];
  /**
   * Host names it answers besides its own address (and `localhost`, on loopback), with or
   * without a port: the names a proxy in front of it is reached by.
   */
  allowedHosts?: readonly string[];
  /** When set, every POST must carry `Authorization: Bearer <token>`. */
  token?: string;
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

/** The payloads in the proto3 JSON form the UI sends: metadata values and data are base64. */
const JsonPayloadsSchema = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), z.string()).nullish(),
      data: z.string().nullish(),
    }),
  ),
});
type JsonPayload = z.infer<typeof JsonPayloadsSchema>['payloads'][number];

/** A page of history payloads is small; this only bounds a misbehaving caller. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

const fromJson = ({ metadata, data }: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(data ?? '', 'base64'),
});
const toJson = ({ metadata, data }: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(data ?? new Uint8Array()).toString('base64'),
});

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'body is not JSON');
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The Host values that name this server: its address and port, and each allowed name, bare or with the port. */
function ownHosts(host: string, port: number, allowed: readonly string[]): Set<string> {
  const names = [host.includes(':') ? `[${host}]` : host, ...(LOOPBACK.has(host) ? ['localhost', '127.0.0.1', '[::1]'] : [])];
  const hosts = new Set(names.map((name) => `${name}:${port}`));
  for (const name of allowed) {
    const lower = name.toLowerCase();
    hosts.add(lower);
    if (!/:\d+$/.test(lower)) hosts.add(`${lower}:${port}`);
  }
  return hosts;
}

/** Compares in constant time, so the answer's timing tells nothing of the token. */
function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set(options.corsOrigins ?? ['http://localhost:8233']);
  const listenHost = options.host ?? '127.0.0.1';
  // Known once listening: the port may be a free one the system picked.
  let hosts = new Set<string>();

  /** CORS for the UI: it runs in the browser on another origin and sends JSON plus `X-Namespace`. */
  const cors = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin === undefined || !origins.has(origin)) return;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'content-type, x-namespace, authorization');
    // The UI sends its session cookie or token when "include credentials" is on.
    res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('access-control-max-age', '600');
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    cors(req, res);
    const route = new URL(req.url ?? '/', 'http://codec').pathname;
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'POST' || (route !== '/encode' && route !== '/decode')) {
      throw new HttpError(404, `no route for ${req.method} ${route}: this server answers POST /encode and POST /decode`);
    }
    const host = (req.headers.host ?? '').toLowerCase();
    if (!hosts.has(host)) throw new HttpError(403, `Host ${JSON.stringify(host)} is not this codec server: it answers ${[...hosts].join(', ')} (add a name with CODEC_SERVER_HOSTS)`);
    if (options.token !== undefined) {
      const given = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (given === undefined || !sameToken(given, options.token)) {
        res.setHeader('www-authenticate', 'Bearer');
        throw new HttpError(401, 'send Authorization: Bearer <CODEC_SERVER_TOKEN> (temporal --codec-auth "Bearer …")');
      }
    }
    if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'send the payloads as Content-Type: application/json');
    const parsed = JsonPayloadsSchema.safeParse(await readJson(req));
    if (!parsed.success) throw new HttpError(400, `expected {"payloads": [{"metadata": {…}, "data": "…"}]}: ${z.prettifyError(parsed.error)}`);
    const payloads = parsed.data.payloads.map(fromJson);
    let result: Payload[];
    try {
      result = route === '/encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
    } catch (error) {
      // A wrong key is the caller's configuration, said plainly; never a stack trace.
      throw new HttpError(422, error instanceof Error ? error.message : String(error));
    }
    send(res, 200, { payloads: result.map(toJson) });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (!res.headersSent) send(res, status, { error: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, listenHost, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  hosts = ownHosts(listenHost, port, options.allowedHosts ?? []);
  return {
    url: `http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

const list = (v: string) =>
  v
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);

const CodecServerEnvSchema = z.object({
  CODEC_SERVER_PORT: z.coerce.number().int().min(1).max(65_535).default(8888),
  CODEC_SERVER_CORS_ORIGINS: z.string().default('http://localhost:8233').transform(list),
  CODEC_SERVER_HOSTS: z
    .string()
    .default('')
    .transform(list)
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, { message: 'must be host names, each with or without :port, comma-separated' }))),
  // A token is only worth asking for if it cannot be guessed.
  CODEC_SERVER_TOKEN: z.string().min(32, { message: 'must be at least 32 characters (e.g. the output of `openssl rand -hex 16`)' }).optional(),
});

async function main(): Promise<void> {
  const key = encryptionKeyFromEnv(process.env);
  if (!key) throw new ConfigError('set AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID to the worker\'s key: there is nothing to decode without them');
  const parsed = CodecServerEnvSchema.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== '')));
  if (!parsed.success) throw new ConfigError(describeEnvIssues(parsed.error));
  const { CODEC_SERVER_PORT: port, CODEC_SERVER_CORS_ORIGINS: corsOrigins, CODEC_SERVER_HOSTS: allowedHosts, CODEC_SERVER_TOKEN: token } = parsed.data;
  const server = await startCodecServer({ codec: new AesGcmCodec(key), port, corsOrigins, allowedHosts, ...(token === undefined ? {} : { token }) });
  const ids = [key.id, ...(key.previous ?? []).map((k) => k.id)].map((id) => `"${id}"`).join(', ');
  console.log(`codec server: ${server.url} (key ids ${ids}, CORS for ${corsOrigins.join(', ')}${token === undefined ? '' : ', bearer token required'}). Ctrl-C stops it.`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void server.close().then(() => process.exit(0)));
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `codec server: ${error.message}` : error);
    process.exit(1);
  });
}
