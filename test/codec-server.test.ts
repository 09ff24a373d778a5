/**
 * The codec server (scripts/codec-server.ts) decrypts whatever it is sent, so it must answer
 * only the UI and the CLI it serves: not a web page that rebinds its own name to 127.0.0.1
 * (the browser then sends that page's Host), not a cross-origin form post (which cannot send
 * JSON without a preflight), and, when CODEC_SERVER_TOKEN is set, nobody without the token.
 * A real server on 127.0.0.1 with the real AES-GCM codec, asked over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmCodec } from '../encryption/aes-gcm-codec';
import { startCodecServer, type CodecServer } from '../scripts/codec-server';
import { runEntry } from './support/cli';

const codec = new AesGcmCodec({ id: 'codec-test', bytes: randomBytes(32) });
const TOKEN = `token-${randomBytes(16).toString('hex')}`;
const SECRET_TEXT = `secret-${randomBytes(6).toString('hex')}`;

let open: CodecServer;
let guarded: CodecServer;
/** One encrypted payload in the proto3 JSON form the UI posts. */
let body: string;

beforeAll(async () => {
  open = await startCodecServer({ codec, allowedHosts: ['codec.internal.example'] });
  guarded = await startCodecServer({ codec, token: TOKEN });
  const [encrypted] = await codec.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(SECRET_TEXT)) } satisfies Payload]);
  const json = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
  body = JSON.stringify({ payloads: [{ metadata: Object.fromEntries(Object.entries(encrypted?.metadata ?? {}).map(([k, v]) => [k, json(v)])), data: json(encrypted?.data) }] });
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
});

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** node:http, not fetch: fetch will not send a Host header of the caller's choosing, which a rebinding browser does. */
function ask(server: CodecServer, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<Answer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: options.method ?? 'POST', path: options.path ?? '/decode', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const own = (server: CodecServer) => new URL(server.url).host;
const port = (server: CodecServer) => new URL(server.url).port;
const JSON_TYPE = { 'content-type': 'application/json' };

describe('the codec server', () => {
  it('decodes for a caller that names it by its own address, by localhost, or by a name in CODEC_SERVER_HOSTS', async () => {
    for (const host of [own(open), `localhost:${port(open)}`, `codec.internal.example:${port(open)}`, 'codec.internal.example']) {
      const answer = await ask(open, { headers: { ...JSON_TYPE, host }, body });
      expect(answer.status, host).toBe(200);
      expect(answer.text, host).toContain(Buffer.from(JSON.stringify(SECRET_TEXT)).toString('base64'));
    }
  });

  it('refuses a request whose Host is another name, as a page that rebound its DNS name to 127.0.0.1 sends: 403, nothing decrypted', async () => {
    for (const host of [`attacker.example:${port(open)}`, 'attacker.example', `127.0.0.1.attacker.example:${port(open)}`, `localhost:${Number(port(open)) + 1}`]) {
      const answer = await ask(open, { headers: { ...JSON_TYPE, host, origin: 'http://attacker.example' }, body });
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.text), host).toEqual({ error: expect.stringMatching(/^Host .* is not this codec server: it answers /) });
      expect(answer.text).not.toContain(Buffer.from(JSON.stringify(SECRET_TEXT)).toString('base64'));
    }
  });

  it('refuses a POST that is not application/json with 415, so a cross-origin form or text/plain post (which needs no preflight) reads nothing', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const answer = await ask(open, { headers: { 'content-type': type }, body });
      expect(answer.status, type).toBe(415);
      expect(JSON.parse(answer.text)).toEqual({ error: 'send the payloads as Content-Type: application/json' });
    }
    expect((await ask(open, { headers: {}, body })).status).toBe(415);
    expect((await ask(open, { headers: { 'content-type': 'application/json; charset=utf-8' }, body })).status).toBe(200);
  });

  it('with CODEC_SERVER_TOKEN, answers only Authorization: Bearer <token>, never echoing it, and still answers the preflight, which browsers send without it', async () => {
    const without = await ask(guarded, { headers: JSON_TYPE, body });
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toBe('Bearer');
    const wrong = await ask(guarded, { headers: { ...JSON_TYPE, authorization: `Bearer ${TOKEN.slice(0, -1)}x` }, body });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(TOKEN.slice(0, 12));
    expect((await ask(guarded, { headers: { ...JSON_TYPE, authorization: TOKEN }, body })).status).toBe(401);
    expect((await ask(guarded, { headers: { ...JSON_TYPE, authorization: `Bearer ${TOKEN}` }, body })).status).toBe(200);
    const preflight = await ask(guarded, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/authorization/);
  });

  it('refuses a CODEC_SERVER_TOKEN too short to guess at, in one line without the value', async () => {
    const result = await runEntry('scripts/codec-server.ts', [], { AGENT_ENCRYPTION_KEY: randomBytes(32).toString('base64'), AGENT_ENCRYPTION_KEY_ID: 'k1', CODEC_SERVER_TOKEN: 'short-one' }, 20_000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['codec server: CODEC_SERVER_TOKEN: must be at least 32 characters (e.g. the output of `openssl rand -hex 16`)']);
  });
});
