/**
 * The live stream's transports (docs/live-stream.md) on real sockets: the embedded Unix
 * socket between publishers and a subscriber in this process, and a real nats-server that
 * a publisher in another process reaches, stopped and started again under it. What the
 * worker publishes on them is test/live-stream.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_STREAM_VERSION } from '../contracts/live-stream';
import { MAX_SOCKET_PATH_BYTES, parseLiveStreamEnv, subjectPrefixOf } from '../config/live-stream';
import { parseWorkerEnv } from '../worker/config';
import { startNatsServer, type NatsServer } from '../harness/nats-server';
import { PROJECT_ROOT } from '../harness/temporal-binaries';
import { EmbeddedPublisher } from '../streaming/embedded-publisher';
import { EmbeddedSubscriber } from '../streaming/embedded-subscriber';
import { createLiveStreamSubscriber, LiveStreamError } from '../streaming';
import { barrier, within } from './support/barrier';
import { eventually } from './support/eventually';
import { delta, follow, textDeltas } from './support/live-frames';

let dir: string;
const run = randomUUID().slice(0, 8);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'live-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the settings', () => {
  it('default to the embedded stream on a socket of this user, named by namespace and task queue', () => {
    const config = parseLiveStreamEnv({ TEMPORAL_NAMESPACE: 'prod', AGENT_TASK_QUEUE: 'support agents' });
    expect(config).toEqual({ mode: 'embedded', socketPath: expect.stringMatching(/durable-agent-live-\d+\/prod-support_agents-[0-9a-f]{12}\.sock$/) });
    const other = parseLiveStreamEnv({ TEMPORAL_NAMESPACE: 'prod', AGENT_TASK_QUEUE: 'billing' });
    expect(other).not.toEqual(config);
    const long = parseLiveStreamEnv({}, { namespace: 'n'.repeat(200), taskQueue: 'q'.repeat(200) });
    expect(long.mode === 'embedded' && Buffer.byteLength(long.socketPath)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
  });

  it('take NATS servers and scope their subjects by namespace and task queue', () => {
    expect(parseLiveStreamEnv({ AGENT_LIVE_STREAM: 'nats://10.0.0.1:4222, nats://10.0.0.2:4222' }, { namespace: 'default', taskQueue: 'a.b' })).toEqual({
      mode: 'nats',
      servers: ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4222'],
      subjectPrefix: `agent.live.default.~${Buffer.from('a.b').toString('base64url')}`,
    });
    expect(parseLiveStreamEnv({ AGENT_LIVE_STREAM: 'off' })).toEqual({ mode: 'off' });
  });

  it('refuse a bad value in one line naming the variable, never repeating it', () => {
    expect(() => parseLiveStreamEnv({ AGENT_LIVE_STREAM: 'redis://user:s3cret@host:6379' })).toThrow(/^AGENT_LIVE_STREAM: must be embedded, off, or nats:\/\/host:port/);
    expect(() => parseLiveStreamEnv({ AGENT_LIVE_STREAM: 'redis://user:s3cret@host:6379' })).not.toThrow(/s3cret/);
    expect(() => parseLiveStreamEnv({ AGENT_LIVE_STREAM_SOCKET: 'relative/gw.sock' })).toThrow(/^AGENT_LIVE_STREAM_SOCKET: must be an absolute path/);
    expect(() => parseWorkerEnv({ AGENT_LIVE_STREAM: 'nats://', AGENT_LOG_CACHE_MB: '-1' })).toThrow(/AGENT_LIVE_STREAM: .*AGENT_LOG_CACHE_MB|AGENT_LOG_CACHE_MB: .*AGENT_LIVE_STREAM/);
  });

  it('refuse a second gateway on a socket another one listens on, pointing at the broker', async () => {
    const socketPath = path.join(dir, 'taken.sock');
    const first = await EmbeddedSubscriber.listen(socketPath, { log: () => undefined });
    try {
      const second = EmbeddedSubscriber.listen(socketPath, { log: () => undefined });
      await expect(second).rejects.toThrow(LiveStreamError);
      await expect(second).rejects.toThrow(/^AGENT_LIVE_STREAM_SOCKET: another gateway listens at .*; several gateways on one machine need a broker/);
    } finally {
      await first.close();
    }
  });
});

describe('the embedded stream', () => {
  it('drops frames while no gateway listens, and says hello again when it reconnects', async () => {
    const socketPath = path.join(dir, 'reconnect.sock');
    const first = await EmbeddedSubscriber.listen(socketPath, { log: () => undefined });
    const hello1 = barrier();
    first.onResync(() => hello1.open());
    const publisher = new EmbeddedPublisher(socketPath, { reconnectMs: 50, log: () => undefined });
    try {
      await within(hello1.wait(), 'the first hello');
      await first.close();
      await eventually('the publisher to see the gateway gone', () => (publisher.connected ? undefined : true));
      publisher.publish(delta('away', 0, 'lost'));
      expect(publisher.dropped).toBe(1);

      const second = await EmbeddedSubscriber.listen(socketPath, { log: () => undefined });
      const hello2 = barrier();
      second.onResync(() => hello2.open());
      const followed = follow(second, 'away');
      await within(hello2.wait(), 'a hello after the reconnect');
      publisher.publish(delta('away', 0, 'kept'));
      await followed.until('the frame after the reconnect', (f) => f.kind === 'delta');
      expect(followed.frames).toEqual([delta('away', 0, 'kept')]);
      await second.close();
    } finally {
      await publisher.close();
    }
  });

  it('drops frames rather than buffering without bound for a gateway that stops reading', async () => {
    const socketPath = path.join(dir, 'stuck.sock');
    const accepted: net.Socket[] = [];
    const stuck = net.createServer((socket) => {
      socket.pause();
      accepted.push(socket);
    });
    await new Promise<void>((resolve) => stuck.listen(socketPath, resolve));
    const publisher = new EmbeddedPublisher(socketPath, { maxBufferedBytes: 64 * 1024, log: () => undefined });
    try {
      await eventually('the publisher connected', () => (publisher.connected ? true : undefined));
      const piece = 'y'.repeat(8 * 1024);
      for (let i = 0; i < 2_000; i++) publisher.publish(delta('stuck', i * piece.length, piece));
      expect(publisher.dropped).toBeGreaterThan(1_000);
    } finally {
      for (const socket of accepted) socket.destroy();
      await publisher.close();
      await new Promise<void>((resolve) => stuck.close(() => resolve()));
    }
  });

  it('drops a malformed frame, says so once, and goes on with the next', async () => {
    const said: string[] = [];
    const gateway = await EmbeddedSubscriber.listen(path.join(dir, 'malformed.sock'), { log: (line) => said.push(line) });
    const followed = follow(gateway, 'malformed');
    const peer = net.createConnection(gateway.socketPath);
    await new Promise<void>((resolve) => peer.once('connect', () => resolve()));
    peer.write('not json at all\n');
    peer.write(`${JSON.stringify({ kind: 'delta', v: LIVE_STREAM_VERSION, sessionId: 'malformed', turn: 0, step: 1, attempt: 1, channel: 'text', offset: 0, text: 'bad turn' })}\n`);
    peer.write(`${JSON.stringify(delta('malformed', 0, 'good'))}\n`);
    await followed.until('the good frame', (f) => f.kind === 'delta');
    peer.destroy();
    expect(followed.frames).toEqual([delta('malformed', 0, 'good')]);
    expect(gateway.malformed).toBe(2);
    expect(said.filter((line) => line.includes('malformed'))).toHaveLength(1);
    await gateway.close();
  });
});

describe('the NATS stream', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.close();
  });

  it('carries frames from a publisher in another process, and after the broker restarts says connected false, then true, and resyncs', async () => {
    const subjectPrefix = subjectPrefixOf({ namespace: 'default', taskQueue: `live ${run}` });
    // An id with characters a subject gives meaning to.
    const sessionId = `nats.session *${run}> x`;
    const subscriber = await createLiveStreamSubscriber({ mode: 'nats', servers: [nats.url], subjectPrefix }, { log: () => undefined });
    const changes: boolean[] = [];
    const down = barrier();
    const back = barrier();
    const resynced = barrier();
    subscriber.onConnectionChange((connected) => {
      changes.push(connected);
      (connected ? back : down).open();
    });
    const followed = follow(subscriber, sessionId);
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'launch.js'), 'test/support/live-stream-publisher.ts'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, LIVE_NATS_URL: nats.url, LIVE_SUBJECT_PREFIX: subjectPrefix, LIVE_SESSION: sessionId },
      stdio: 'ignore',
    });
    try {
      expect(subscriber.connected).toBe(true);
      await followed.until("the other process's frames", (f) => f.kind === 'delta');
      await nats.stop();
      await within(down.wait(), 'the subscriber to say it lost the broker');
      expect(subscriber.connected).toBe(false);
      const lastBefore = Math.max(...textDeltas(followed.frames).map((f) => f.offset));
      subscriber.onResync(() => resynced.open());
      await nats.start();
      await within(back.wait(), 'the subscriber to say the broker is back');
      await within(resynced.wait(), 'a resync after the broker came back');
      await followed.until('frames after the restart', (f) => f.kind === 'delta' && f.offset > lastBefore + 1);
      expect(changes).toEqual([false, true]);
      expect(followed.frames.every((f) => f.sessionId === sessionId)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      await subscriber.close();
    }
  }, 60_000);
});

