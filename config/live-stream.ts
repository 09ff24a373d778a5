import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseEnv } from './config-error';

/**
 * How worker and gateway reach each other's live stream (docs/live-stream.md), read from
 * AGENT_LIVE_STREAM and AGENT_LIVE_STREAM_SOCKET by both processes alike:
 * - `embedded` (the default): the gateway listens on a Unix socket and the machine's
 *   workers connect to it; one gateway per socket, so one machine.
 * - `nats`: both connect to a NATS broker; any number of workers and gateways.
 * - `off`: nothing is published; a gateway reads logs from Temporal alone.
 */
export type LiveStreamConfig =
  | { mode: 'off' }
  | { mode: 'embedded'; socketPath: string }
  | {
      mode: 'nats';
      /** `nats://host:port` each, credentials included when the broker needs them: never printed. */
      servers: string[];
      /** The first tokens of every subject: the namespace's and task queue's sessions only. Default `agent.live.default.agent`. */
      subjectPrefix?: string;
    };

/** The longest path a Unix socket takes on Linux and macOS (`sun_path` is 108 and 104 bytes, with its NUL). */
export const MAX_SOCKET_PATH_BYTES = 103;

const ModeSchema = z
  .string()
  .transform((value, ctx): { mode: 'off' } | { mode: 'embedded' } | { mode: 'nats'; servers: string[] } | typeof z.NEVER => {
    const trimmed = value.trim();
    if (trimmed === 'off' || trimmed === 'embedded') return { mode: trimmed };
    const servers = trimmed.split(',').map((s) => s.trim());
    // The value may hold a broker's password: the message never repeats it.
    if (servers.every(isNatsUrl)) return { mode: 'nats', servers };
    ctx.addIssue({ code: 'custom', message: 'must be embedded, off, or nats://host:port[,nats://host:port…]' });
    return z.NEVER;
  })
  .default({ mode: 'embedded' });

const SocketSchema = z
  .string()
  .refine((p) => path.isAbsolute(p) && Buffer.byteLength(p) <= MAX_SOCKET_PATH_BYTES, { message: `must be an absolute path of at most ${MAX_SOCKET_PATH_BYTES} bytes (a Unix socket's limit)` })
  .optional();

/** The two variables, checked; the worker's own schema takes these fields so a bad one is reported with its others. */
export const LiveStreamEnvSchema = z.object({
  AGENT_LIVE_STREAM: ModeSchema,
  AGENT_LIVE_STREAM_SOCKET: SocketSchema,
});
export type LiveStreamEnv = z.output<typeof LiveStreamEnvSchema>;

/** Whose sessions a stream carries: one namespace's and task queue's, as the worker serves them. */
export interface LiveStreamScope {
  namespace: string;
  taskQueue: string;
}

/**
 * The live stream's settings from the environment; throws one ConfigError naming
 * AGENT_LIVE_STREAM or AGENT_LIVE_STREAM_SOCKET, never a value. `scope` names the socket
 * and the subjects; by default TEMPORAL_NAMESPACE (else `default`) and AGENT_TASK_QUEUE
 * (else `agent`): pass the namespace a `temporal.toml` profile chose.
 *
 * @example
 * parseLiveStreamEnv({ AGENT_LIVE_STREAM: 'nats://127.0.0.1:4222' }, { namespace: 'default', taskQueue: 'agent' });
 * // { mode: 'nats', servers: ['nats://127.0.0.1:4222'], subjectPrefix: 'agent.live.default.agent' }
 */
export function parseLiveStreamEnv(env: Record<string, string | undefined>, scope: Partial<LiveStreamScope> = {}): LiveStreamConfig {
  const parsed = parseEnv(LiveStreamEnvSchema, env);
  return liveStreamConfigOf(parsed, { namespace: scope.namespace ?? nonBlank(env.TEMPORAL_NAMESPACE) ?? 'default', taskQueue: scope.taskQueue ?? nonBlank(env.AGENT_TASK_QUEUE) ?? 'agent' });
}

/** The settings of variables already checked (the worker's environment holds them). */
export function liveStreamConfigOf(env: LiveStreamEnv, scope: LiveStreamScope): LiveStreamConfig {
  const mode = env.AGENT_LIVE_STREAM;
  if (mode.mode === 'off') return mode;
  if (mode.mode === 'nats') return { mode: 'nats', servers: mode.servers, subjectPrefix: subjectPrefixOf(scope) };
  return { mode: 'embedded', socketPath: env.AGENT_LIVE_STREAM_SOCKET ?? defaultSocketPath(scope) };
}

/**
 * Under the OS temp folder, in a folder of this user's (the listener makes it 0700), named
 * by namespace and task queue so two task queues on one machine never meet. The names are
 * cut and a hash keeps them apart, as a socket path is short.
 */
export function defaultSocketPath(scope: LiveStreamScope): string {
  const user = process.getuid?.() ?? 'user';
  const hash = createHash('sha256').update(`${scope.namespace}\u0000${scope.taskQueue}`).digest('hex').slice(0, 12);
  const name = `${slug(scope.namespace)}-${slug(scope.taskQueue)}-${hash}.sock`;
  return path.join(tmpdir(), `durable-agent-live-${user}`, name);
}

/** `agent.live.<namespace>.<task queue>`, each a subject token of safe characters. */
export function subjectPrefixOf(scope: LiveStreamScope): string {
  return `agent.live.${subjectToken(scope.namespace)}.${subjectToken(scope.taskQueue)}`;
}

/**
 * Any text as one NATS subject token: base64url has no `.`, `*`, `>` or space, which a
 * subject gives meaning to. A plain name (letters, digits, `-`, `_`) stays readable.
 */
export function subjectToken(text: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(text) ? text : `~${Buffer.from(text).toString('base64url')}`;
}

function isNatsUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return url.protocol === 'nats:' && url.hostname !== '' && url.pathname.replace(/^\/$/, '') === '' && url.search === '';
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24);
const nonBlank = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : text);
