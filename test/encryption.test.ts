/**
 * Optional payload encryption (encryption/): AES-256-GCM on every payload the client
 * and the worker send, failure messages included, so the Temporal server stores ciphertext
 * only; and the codec server that lets the Temporal UI show the plain text.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowUpdateStage, type Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConnectionConfig } from '../connection/connection-config';
import { connectClient, endSession, exportHistory, readLog, sendAndWait, startSession, type SessionHandle } from '../client/sessions';
import { startCodecServer, type CodecServer } from '../scripts/codec-server';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server';
import { findFreePort, startDevServer, type DevServer } from '../harness/dev-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { agentWorkerEnv } from '../harness/worker-env';
import type { WorkerProcess } from '../harness/worker-process';
import { AesGcmCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../encryption/aes-gcm-codec';
import { ConfigError } from '../config/config-error';
import { encryptionKeyFromEnv, type EncryptionKey } from '../encryption/encryption-key';
import { sendUpdate } from '../contracts/api';
import { searchableText } from './support/searchable-text';
import { startWorkerProcess } from './support/worker-processes';

const newKey = (id = 'k1'): EncryptionKey => ({ id, bytes: randomBytes(32) });
const payload = (text: string): Payload => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(text)) });
const utf8 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

describe('the AES-256-GCM payload codec', () => {
  it('encrypts a payload whole (metadata too), names its key id, and decrypts it back exactly', async () => {
    const codec = new AesGcmCodec(newKey('prod-2025'));
    const original = payload('the secret prompt');
    const [encrypted] = await codec.encode([original]);
    expect(utf8(encrypted?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(utf8(encrypted?.metadata?.[KEY_ID_METADATA])).toBe('prod-2025');
    expect(utf8(encrypted?.data)).not.toContain('secret prompt');
    expect(utf8(encrypted?.data)).not.toContain('json/plain');
    const [decrypted] = await codec.decode([encrypted as Payload]);
    expect(utf8(decrypted?.data)).toBe(JSON.stringify('the secret prompt'));
    expect(utf8(decrypted?.metadata?.encoding)).toBe('json/plain');
  });

  it('uses a fresh nonce every time: the same payload never encrypts to the same bytes', async () => {
    const codec = new AesGcmCodec(newKey());
    const [a, b] = await codec.encode([payload('same'), payload('same')]);
    expect(Buffer.from(a?.data ?? []).equals(Buffer.from(b?.data ?? []))).toBe(false);
  });

  it('passes payloads that were never encrypted through, so history from before encryption stays readable', async () => {
    const plain = payload('old');
    expect(await new AesGcmCodec(newKey()).decode([plain])).toEqual([plain]);
  });

  it('fails clearly with a wrong key under the same id: PayloadDecryptionError naming AGENT_ENCRYPTION_KEY, never garbage', async () => {
    const [encrypted] = await new AesGcmCodec(newKey('k1')).encode([payload('x')]);
    const decoding = new AesGcmCodec(newKey('k1')).decode([encrypted as Payload]);
    await expect(decoding).rejects.toBeInstanceOf(PayloadDecryptionError);
    await expect(decoding).rejects.toThrow(/key id "k1": AGENT_ENCRYPTION_KEY is not the key it was encrypted with/);
  });

  it('fails clearly with a key of another id, naming both ids', async () => {
    const [encrypted] = await new AesGcmCodec(newKey('old-key')).encode([payload('x')]);
    await expect(new AesGcmCodec(newKey('new-key')).decode([encrypted as Payload])).rejects.toThrow(/encrypted with key id "old-key": this process has AGENT_ENCRYPTION_KEY_ID="new-key"/);
  });

  it('decrypts with a key ring after rotation: the new key encrypts, a previous key still decrypts what it wrote', async () => {
    const old = newKey('key-2025');
    const [written] = await new AesGcmCodec(old).encode([payload('from before the rotation')]);
    const rotated = new AesGcmCodec({ ...newKey('key-2026'), previous: [old] });
    const [decrypted] = await rotated.decode([written as Payload]);
    expect(utf8(decrypted?.data)).toBe(JSON.stringify('from before the rotation'));
    const [fresh] = await rotated.encode([payload('after')]);
    expect(utf8(fresh?.metadata?.[KEY_ID_METADATA])).toBe('key-2026');
    // A previous key only decrypts: the old ring cannot read what the new key wrote.
    await expect(new AesGcmCodec(old).decode([fresh as Payload])).rejects.toThrow(/encrypted with key id "key-2026"/);
    await expect(rotated.decode([fresh as Payload])).resolves.toHaveLength(1);
  });

  it('names the ring in the refusal of an id it does not hold, and a previous key that does not fit its id', async () => {
    const [encrypted] = await new AesGcmCodec(newKey('key-2024')).encode([payload('x')]);
    const ring = new AesGcmCodec({ ...newKey('key-2026'), previous: [newKey('key-2025')] });
    await expect(ring.decode([encrypted as Payload])).rejects.toThrow(/key id "key-2024": this process has AGENT_ENCRYPTION_KEY_ID="key-2026" and no such id in AGENT_ENCRYPTION_PREVIOUS_KEYS/);
    const [byOld] = await new AesGcmCodec(newKey('key-2025')).encode([payload('x')]);
    await expect(ring.decode([byOld as Payload])).rejects.toThrow(/key id "key-2025": the key AGENT_ENCRYPTION_PREVIOUS_KEYS gives it is not the key it was encrypted with/);
  });

  it('rejects a payload whose key id was rewritten: the id is authenticated with the data', async () => {
    const key = newKey('a');
    const [encrypted] = await new AesGcmCodec(key).encode([payload('x')]);
    const relabelled = { ...encrypted, metadata: { ...encrypted?.metadata, [KEY_ID_METADATA]: Buffer.from('b') } };
    await expect(new AesGcmCodec({ id: 'b', bytes: key.bytes }).decode([relabelled])).rejects.toThrow(PayloadDecryptionError);
  });
});

describe('AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID', () => {
  const key = randomBytes(32).toString('base64');
  it('are off when neither is set, and parsed when both are', () => {
    expect(encryptionKeyFromEnv({})).toBeUndefined();
    expect(encryptionKeyFromEnv({ AGENT_ENCRYPTION_KEY: '', AGENT_ENCRYPTION_KEY_ID: '' })).toBeUndefined();
    expect(encryptionKeyFromEnv({ AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k1' })).toEqual({ id: 'k1', bytes: Buffer.from(key, 'base64') });
  });

  it('read AGENT_ENCRYPTION_PREVIOUS_KEYS as id=key pairs that decrypt only', () => {
    const old = randomBytes(32).toString('base64');
    const older = randomBytes(32).toString('base64');
    expect(encryptionKeyFromEnv({ AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k3', AGENT_ENCRYPTION_PREVIOUS_KEYS: `k2=${old}, k1=${older}` })).toEqual({
      id: 'k3',
      bytes: Buffer.from(key, 'base64'),
      previous: [
        { id: 'k2', bytes: Buffer.from(old, 'base64') },
        { id: 'k1', bytes: Buffer.from(older, 'base64') },
      ],
    });
  });

  it.each([
    ['a key that is not base64', { AGENT_ENCRYPTION_KEY: 'not base64!!', AGENT_ENCRYPTION_KEY_ID: 'k1' }, /AGENT_ENCRYPTION_KEY must be base64/],
    ['a key of 16 bytes', { AGENT_ENCRYPTION_KEY: randomBytes(16).toString('base64'), AGENT_ENCRYPTION_KEY_ID: 'k1' }, /exactly 32 bytes/],
    ['a key without an id', { AGENT_ENCRYPTION_KEY: key }, /set both AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID/],
    ['an id with a space', { AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'my key' }, /AGENT_ENCRYPTION_KEY_ID must be/],
    ['previous keys without a current one', { AGENT_ENCRYPTION_PREVIOUS_KEYS: `k0=${key}` }, /AGENT_ENCRYPTION_PREVIOUS_KEYS: only decrypts, so it needs AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID/],
    ['a previous key without its id', { AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k1', AGENT_ENCRYPTION_PREVIOUS_KEYS: key }, /AGENT_ENCRYPTION_PREVIOUS_KEYS: entry 1 is not id=key/],
    ['a previous key of 16 bytes', { AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k1', AGENT_ENCRYPTION_PREVIOUS_KEYS: `k0=${randomBytes(16).toString('base64')}` }, /AGENT_ENCRYPTION_PREVIOUS_KEYS: the key of "k0" must be base64 of exactly 32 bytes/],
    ['a previous key under the current id', { AGENT_ENCRYPTION_KEY: key, AGENT_ENCRYPTION_KEY_ID: 'k1', AGENT_ENCRYPTION_PREVIOUS_KEYS: `k1=${randomBytes(32).toString('base64')}` }, /AGENT_ENCRYPTION_PREVIOUS_KEYS: "k1" is AGENT_ENCRYPTION_KEY_ID already/],
  ])('refuse %s with a message naming the variable and never the key', (_name, env, message) => {
    let error: unknown;
    try {
      encryptionKeyFromEnv(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.split('\n')).toHaveLength(1);
    const vars: Record<string, string | undefined> = env;
    const previousKey = vars.AGENT_ENCRYPTION_PREVIOUS_KEYS?.split('=').slice(1).join('=');
    for (const secret of [vars.AGENT_ENCRYPTION_KEY, previousKey]) if (secret) expect((error as Error).message).not.toContain(secret);
  });
});

/** Every payload in a history JSON (objects with base64 `metadata.encoding`), with where it was. */
function payloadsIn(value: unknown, at = '', found: { at: string; metadata: Record<string, string>; data?: string }[] = []) {
  if (Array.isArray(value)) value.forEach((v, i) => payloadsIn(v, `${at}[${i}]`, found));
  else if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (typeof v.metadata === 'object' && v.metadata !== null && 'encoding' in v.metadata) found.push({ at, metadata: v.metadata as Record<string, string>, ...(typeof v.data === 'string' ? { data: v.data } : {}) });
    else Object.entries(v).forEach(([k, child]) => payloadsIn(child, `${at}.${k}`, found));
  }
  return found;
}
/** Every Failure object in a history JSON (they carry `message` and a `*FailureInfo`). */
function failuresIn(value: unknown, found: Record<string, unknown>[] = []) {
  if (Array.isArray(value)) value.forEach((v) => failuresIn(v, found));
  else if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (typeof v.message === 'string' && Object.keys(v).some((k) => k.endsWith('FailureInfo'))) found.push(v);
    Object.values(v).forEach((child) => failuresIn(child, found));
  }
  return found;
}

describe('a session with encryption on, on a dev server with its own SQLite file', () => {
  const MARK = randomBytes(6).toString('hex');
  const PROMPT = `prompt-${MARK}: what is 6*7?`;
  const SYSTEM = `system-${MARK}: answer briefly`;
  const ANSWER = `answer-${MARK}: it is 42`;
  // Its own marker: the model name is a search attribute, in the clear by design.
  const MODEL = `enc-model-${randomBytes(6).toString('hex')}`;
  const DIR = path.join(PROJECT_ROOT, '.data', `encryption-${randomUUID()}`);
  const key = newKey(`key-${randomBytes(4).toString('hex')}`);
  const keyEnv = { AGENT_ENCRYPTION_KEY: key.bytes.toString('base64'), AGENT_ENCRYPTION_KEY_ID: key.id };

  let server: DevServer | undefined;
  let llm: ScriptedLlm;
  let worker: WorkerProcess | undefined;
  let client: Client;
  const clients: Client[] = [];
  let codecServer: CodecServer | undefined;
  let ok: SessionHandle;
  let failed: SessionHandle;
  let failedMessage = '';

  beforeAll(async () => {
    server = await startDevServer({ ip: '127.0.0.1', port: await findFreePort(), uiPort: false, dbFile: path.join(DIR, 'temporal.sqlite'), output: 'ignore' });
    llm = await startScriptedLlm();
    const taskQueue = `encryption-${randomUUID()}`;
    worker = await startWorkerProcess('encryption', agentWorkerEnv({ address: server.address, taskQueue, llmUrl: llm.url, extra: keyEnv }));
    const env = { connection: loadConnectionConfig({ TEMPORAL_ADDRESS: server.address }) };
    client = await connectClient(env, key);
    clients.push(client);

    llm.script(MODEL, { kind: 'tool_calls', calls: [{ name: 'calculator', input: { expression: '6*7' } }] }, { kind: 'text', text: ANSWER });
    ok = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${MODEL}`, system: SYSTEM });
    expect(await sendAndWait(ok, PROMPT)).toEqual({ status: 'completed', turn: 1, reason: 'answered' });

    llm.script(`${MODEL}-401`, { kind: 'status', status: 401, message: `bad key, said about ${MARK}` });
    failed = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${MODEL}-401` });
    const update = await failed.startUpdate(sendUpdate, { args: [{ text: PROMPT }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    failedMessage = await update.result().then(
      () => '',
      (error: unknown) => String((error as { cause?: { message?: string } }).cause?.message),
    );
  }, 180_000);

  afterAll(async () => {
    await worker?.kill('SIGKILL');
    for (const c of clients) await c.connection.close().catch(() => undefined);
    await codecServer?.close();
    await server?.stop();
    await llm?.close();
    await rm(DIR, { recursive: true, force: true });
  });

  it('runs end to end for a client holding the key: it reads the prompt, the answer and the failure in plain text', async () => {
    const log = await readLog(ok);
    expect(log[0]).toMatchObject({ type: 'turn/start', text: PROMPT });
    expect(log.some((e) => e.type === 'assistant' && e.message.text === ANSWER)).toBe(true);
    expect(failedMessage).toMatch(/401/);
    expect((await readLog(failed)).at(-1)).toMatchObject({ type: 'turn/end', status: 'failed', failure: { type: 'auth_error', message: expect.stringContaining(MARK) } });
  });

  it('stores ciphertext only: every payload in history but the search attributes is binary/encrypted under the key id, and no prompt, system prompt, answer or failure text is in it', async () => {
    for (const handle of [ok, failed]) {
      const history = JSON.parse(await exportHistory(client, handle.workflowId));
      const payloads = payloadsIn(history.events);
      const decoded = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString();
      const clear = payloads.filter((p) => decoded(p.metadata.encoding) !== ENCRYPTED_ENCODING);
      const plain = clear.map((p) => p.at.replace(/^\[\d+\]/, ''));
      // Search attributes, which the server indexes, so they cannot be encrypted (and hold no
      // conversation); and, once a release patches a change, Temporal's record of the
      // `patched()` code change, its marker and its TemporalChangeVersion attribute, which
      // hold the change's id and nothing else.
      const attribute = (k: string) => `.upsertWorkflowSearchAttributesEventAttributes.searchAttributes.indexedFields.${k}`;
      const searchAttributes = ['AgentModel', 'AgentStatus', 'AgentStepCount'].map(attribute);
      // The same attributes as the client's start request set them (contracts/session-revision.ts).
      const startAttributes = ['AgentModel', 'AgentStatus', 'AgentStepCount'].map((k) => `.workflowExecutionStartedEventAttributes.searchAttributes.indexedFields.${k}`);
      const patchRecords = ['.markerRecordedEventAttributes.details.patch-data.payloads[0]', attribute('TemporalChangeVersion')];
      const inTheClear = [...new Set(plain)];
      expect(inTheClear.filter((at) => !searchAttributes.includes(at) && !startAttributes.includes(at) && !patchRecords.includes(at))).toEqual([]);
      expect(inTheClear).toEqual(expect.arrayContaining(searchAttributes));
      for (const p of clear.filter((c) => patchRecords.includes(c.at.replace(/^\[\d+\]/, '')))) {
        expect(decoded(p.data)).toMatch(/^(\{"id":"[\w-]+","deprecated":(true|false)\}|\["[\w-]+"(,"[\w-]+")*\])$/);
      }
      expect(payloads.length).toBeGreaterThan(plain.length + 3);
      for (const p of payloads) if (decoded(p.metadata.encoding) === ENCRYPTED_ENCODING) expect(decoded(p.metadata[KEY_ID_METADATA])).toBe(key.id);
      expect(searchableText(history)).not.toContain(MARK);
    }
  });

  it('encodes failure messages too: history shows "Encoded failure", never the message', async () => {
    const history = JSON.parse(await exportHistory(client, failed.workflowId));
    const failures = failuresIn(history);
    // The activity's failure and the turn's (raised in the workflow sandbox), with their causes.
    expect(failures.length).toBeGreaterThanOrEqual(2);
    for (const f of failures) {
      expect(f.message).toBe('Encoded failure');
      expect(f.encodedAttributes).toBeDefined();
    }
    // The type stays readable: retry policies and the UI work on it.
    expect(JSON.stringify(failures)).toContain('auth_error');
  });

  it('fails clearly for a client with the wrong key (PayloadDecryptionError naming AGENT_ENCRYPTION_KEY), and for one with no key', async () => {
    await endSession(ok);
    const env = { connection: loadConnectionConfig({ TEMPORAL_ADDRESS: server?.address }) };
    const wrong = await connectClient(env, { id: key.id, bytes: randomBytes(32) });
    const none = await connectClient(env, undefined);
    clients.push(wrong, none);
    // What the client decodes itself says why it cannot.
    await expect(wrong.workflow.getHandle(ok.workflowId).result()).rejects.toThrow(/AGENT_ENCRYPTION_KEY is not the key it was encrypted with/);
    await expect(none.workflow.getHandle(ok.workflowId).result()).rejects.toThrow(/binary\/encrypted/);
    // A Query's arguments are decoded by the worker, which cannot read the wrong key's: the
    // query fails, and its reason is encrypted for the right key, which this client cannot
    // decrypt either: it says so, for the key id, rather than showing garbage.
    await expect(readLog(wrong.workflow.getHandle(ok.workflowId))).rejects.toThrow(
      new RegExp(`cannot decrypt a payload with key id "${key.id}": AGENT_ENCRYPTION_KEY is not the key it was encrypted with`),
    );
  });

  it('serves the Temporal UI: /decode returns the plain text of a stored payload, with the CORS headers the UI needs', async () => {
    codecServer = await startCodecServer({ codec: new AesGcmCodec(key), corsOrigins: ['http://localhost:8233'] });
    const history = JSON.parse(await exportHistory(client, ok.workflowId));
    const input = history.events[0].workflowExecutionStartedEventAttributes.input;

    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/x-namespace/);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);

    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { origin: 'http://localhost:8233', 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify(input),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const decoded = (await response.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(decoded.payloads[0]?.metadata.encoding ?? '', 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(decoded.payloads[0]?.data ?? '', 'base64').toString())).toMatchObject({ model: `anthropic:${MODEL}`, system: SYSTEM });

    // Encoding, for the UI's forms, round-trips through /decode.
    const json = { 'content-type': 'application/json' };
    const encoded = await (await fetch(`${codecServer.url}/encode`, { method: 'POST', headers: json, body: JSON.stringify(decoded) })).json();
    const again = await (await fetch(`${codecServer.url}/decode`, { method: 'POST', headers: json, body: JSON.stringify(encoded) })).json();
    expect(again).toEqual(decoded);

    // Another site's page cannot read it from the browser.
    const foreign = await fetch(`${codecServer.url}/decode`, { method: 'POST', headers: { ...json, origin: 'https://evil.example' }, body: JSON.stringify(input) });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a codec server holding the wrong key with a clear 422, not with garbage', async () => {
    const wrong = await startCodecServer({ codec: new AesGcmCodec({ id: key.id, bytes: randomBytes(32) }) });
    try {
      const history = JSON.parse(await exportHistory(client, ok.workflowId));
      const response = await fetch(`${wrong.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(history.events[0].workflowExecutionStartedEventAttributes.input) });
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({ error: expect.stringMatching(/AGENT_ENCRYPTION_KEY is not the key it was encrypted with/) });
    } finally {
      await wrong.close();
    }
  });

  it('keeps an open session going across a key rotation: a worker holding the new key and the old one in AGENT_ENCRYPTION_PREVIOUS_KEYS replays its history and answers the next message', async () => {
    const taskQueue = `encryption-rotation-${randomUUID()}`;
    const rotationModel = `${MODEL}-rotation`;
    const before = await startWorkerProcess('encryption-before-rotation', agentWorkerEnv({ address: server?.address ?? '', taskQueue, llmUrl: llm.url, extra: keyEnv }));
    llm.script(rotationModel, { kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    const env = { connection: loadConnectionConfig({ TEMPORAL_ADDRESS: server?.address }) };
    const open = await startSession(client, { AGENT_TASK_QUEUE: taskQueue }, { model: `anthropic:${rotationModel}` });
    expect(await sendAndWait(open, 'before the rotation')).toMatchObject({ status: 'completed', turn: 1 });
    await before.kill('SIGKILL');

    const next = newKey(`${key.id}-next`);
    const ring = { ...next, previous: [key] };
    const rotatedEnv = {
      AGENT_ENCRYPTION_KEY: next.bytes.toString('base64'),
      AGENT_ENCRYPTION_KEY_ID: next.id,
      AGENT_ENCRYPTION_PREVIOUS_KEYS: `${key.id}=${key.bytes.toString('base64')}`,
    };
    const after = await startWorkerProcess('encryption-after-rotation', agentWorkerEnv({ address: server?.address ?? '', taskQueue, llmUrl: llm.url, extra: rotatedEnv }));
    try {
      const rotated = await connectClient(env, ring);
      clients.push(rotated);
      const handle = rotated.workflow.getHandle(open.workflowId);
      expect(await sendAndWait(handle, 'after the rotation')).toMatchObject({ status: 'completed', turn: 2 });
      const log = await readLog(handle);
      expect(log.filter((e) => e.type === 'assistant').map((e) => e.type === 'assistant' && e.message.text)).toEqual(['one', 'two']);
      // History now holds payloads of both keys, and the new key encrypts from here on.
      const ids = new Set(payloadsIn(JSON.parse(await exportHistory(rotated, open.workflowId)).events).map((p) => Buffer.from(p.metadata[KEY_ID_METADATA] ?? '', 'base64').toString()));
      expect(ids).toEqual(new Set([key.id, next.id, '']));
    } finally {
      await after.kill('SIGKILL');
    }
  }, 120_000);

  it('leaves no prompt, answer or failure text in the dev server\'s SQLite file, which does hold the session (its model name, a search attribute, is in the clear)', async () => {
    await server?.stop();
    server = undefined;
    const files = (await readdir(DIR)).filter((f) => f.startsWith('temporal.sqlite'));
    const bytes = Buffer.concat(await Promise.all(files.map((f) => readFile(path.join(DIR, f)))));
    expect(bytes.includes(Buffer.from(MODEL))).toBe(true);
    for (const secret of [PROMPT, SYSTEM, ANSWER, `bad key, said about ${MARK}`]) expect(bytes.includes(Buffer.from(secret))).toBe(false);
  });
});
