/**
 * Fuzzes the command line and the environment, the trust boundary of every process a person
 * starts: whatever the flags and variables say, a process that refuses them says so in
 * exactly one line (the client exits 2, the worker 1), never a stack trace, and never echoes
 * a secret (API keys, the encryption keys), which a terminal, a CI log or a screen share
 * would keep. Two layers: the pure readers the processes call, with many cases; then a few
 * cases through the real `client/main.ts` and `worker/main.ts` processes.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SESSION_FLAGS, sessionOptionsFrom } from '../../client/commands/session-options';
import { parseClientEnv } from '../../client/config';
import { ConfigError, readAllSettings } from '../../config/config-error';
import { loadConnectionConfig } from '../../connection/connection-config';
import { encryptionKeyFromEnv } from '../../encryption/encryption-key';
import { parseWorkerEnv } from '../../worker/config';
import { tracingConfigFromEnv } from '../../tracing/tracing-config';
import { runEntry } from '../support/cli';
import { assertProperty } from '../support/fuzz';

/** Nothing listens here: a process that gets past its settings fails to connect, in its own one line. */
const NO_SERVER = 'localhost:1';
/** Paths the readers may be pointed at: none exists, so no fuzzed case reads or writes a real file. */
const NOWHERE = path.join(tmpdir(), 'agent-fuzz-no-such-dir');

/** What a shell, a .env file or a paste passes on: numbers in every notation, blanks, control characters, any text. */
const anyValue = fc.oneof(
  fc.constantFrom('', ' ', 'true', 'false', 'yes', '0', '-1', '1e12', '1e3', '0x10', '1_000', 'NaN', 'Infinity', '9'.repeat(30), '1.5', ',', ',,', '=', '*', 'localhost:*', 'a b', '\n', 'x\ny', '\u0000', '"', '\\', 'http://', 'ftp://x'),
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
);
const listValue = fc.array(fc.oneof(anyValue, fc.constantFrom('calculator', 'read_file', 'write_file', 'http_request', 'docs', 'api.example.com', 'localhost:8080')), { maxLength: 4 }).map((items) => items.join(','));
const fileValue = fc.string({ maxLength: 12 }).map((name) => path.join(NOWHERE, name));

/** A secret worth not echoing: distinctive, so finding it in a message is an echo, not chance. */
const secret = fc.stringMatching(/^[A-Za-z0-9]{24,40}$/).map((core) => ({ core, text: `sk-${core}` }));
/** A secret as it may arrive: alone, with a newline pasted after it, with spaces, or inside a wrong shape. */
const secretValue = fc.tuple(secret, fc.constantFrom('', '\n', ' ', '\t', '"')).map(([s, around]) => ({ core: s.core, text: `${around}${s.text}${around}` }));
/** An encryption key that is itself the secret: base64 of a wrong length, or not base64 at all. */
const keyValue = fc.oneof(
  fc.uint8Array({ minLength: 8, maxLength: 48 }).filter((b) => b.length !== 32).map((b) => Buffer.from(b).toString('base64')),
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `${Buffer.from(b).toString('base64')}!`),
).map((text) => ({ core: text.replace(/=+!?$|!$/, ''), text }));
const previousKeysValue = fc
  .array(fc.tuple(fc.constantFrom('k0', 'old', 'k1', 'a b', ''), fc.oneof(keyValue, fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => ({ core: Buffer.from(b).toString('base64').replace(/=+$/, ''), text: Buffer.from(b).toString('base64') })))), { minLength: 1, maxLength: 3 })
  .map((pairs) => ({ text: pairs.map(([id, key]) => (id === '' ? key.text : `${id}=${key.text}`)).join(','), cores: pairs.map(([, key]) => key.core) }));

/** Variables whose values are secrets, and what of each must never be repeated. */
type Secrets = Record<string, { text: string; cores: string[] }>;
const secrets = fc.record(
  {
    TEMPORAL_API_KEY: secretValue.map((s) => ({ text: s.text, cores: [s.core] })),
    ANTHROPIC_API_KEY: secretValue.map((s) => ({ text: s.text, cores: [s.core] })),
    OPENAI_API_KEY: secretValue.map((s) => ({ text: s.text, cores: [s.core] })),
    GEMINI_API_KEY: secretValue.map((s) => ({ text: s.text, cores: [s.core] })),
    AGENT_ENCRYPTION_KEY: keyValue.map((k) => ({ text: k.text, cores: [k.core] })),
    AGENT_ENCRYPTION_PREVIOUS_KEYS: previousKeysValue,
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Secrets>;

/** Variables that are not secrets, each with values of its kind and any others. */
const WORKER_VARIABLES: Record<string, fc.Arbitrary<string>> = {
  AGENT_TASK_QUEUE: anyValue,
  ANTHROPIC_BASE_URL: anyValue,
  OPENAI_BASE_URL: anyValue,
  GEMINI_BASE_URL: anyValue,
  AGENT_LLM_IDLE_TIMEOUT_MS: anyValue,
  AGENT_HTTP_ALLOWLIST: listValue,
  AGENT_HTTP_MAX_RESPONSE_BYTES: anyValue,
  AGENT_LOG_CACHE_MB: anyValue,
  AGENT_REGISTER_SEARCH_ATTRIBUTES: anyValue,
  AGENT_SHUTDOWN_GRACE_MS: anyValue,
  AGENT_DEPLOYMENT_NAME: anyValue,
  AGENT_BUILD_ID: anyValue,
  AGENT_ENCRYPTION_KEY_ID: anyValue,
  AGENT_TRACE_CONTENT: anyValue,
  OTEL_TRACES_SAMPLER: anyValue,
  OTEL_EXPORTER_OTLP_PROTOCOL: anyValue,
};
/** What reaches a server or a file; fuzzed in the pure layer only, so no case leaves the machine. */
const CONNECTION_VARIABLES: Record<string, fc.Arbitrary<string>> = {
  TEMPORAL_ADDRESS: anyValue,
  TEMPORAL_NAMESPACE: anyValue,
  TEMPORAL_TLS: anyValue,
  TEMPORAL_PROFILE: anyValue,
  TEMPORAL_CONFIG_FILE: fileValue,
  TEMPORAL_TLS_CLIENT_CERT_PATH: fileValue,
  TEMPORAL_TLS_SERVER_NAME: anyValue,
  OTEL_EXPORTER_OTLP_ENDPOINT: anyValue,
};
const CLIENT_VARIABLES: Record<string, fc.Arbitrary<string>> = {
  AGENT_TASK_QUEUE: anyValue,
  AGENT_MODEL: fc.oneof(anyValue, fc.constantFrom('anthropic:x', 'openai:', 'gpt-4o')),
  AGENT_MAX_STEPS: anyValue,
  AGENT_MAX_TOKENS: anyValue,
  AGENT_TOOLS: listValue,
  AGENT_MODELS_FILE: fileValue,
  TEMPORAL_UI_URL: anyValue,
};

const some = (variables: Record<string, fc.Arbitrary<string>>) => fc.record(variables, { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
const withSecrets = (plain: Record<string, string>, hidden: Secrets) => ({ ...plain, ...Object.fromEntries(Object.entries(hidden).map(([name, s]) => [name, s.text])) });

/** The refusal's text, if any; anything thrown but a ConfigError is a bug the property reports. */
function refusalOf(read: () => unknown): string | undefined {
  try {
    read();
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message;
  }
}

function expectOneLineWithoutSecrets(text: string, hidden: Secrets): void {
  expect(text).not.toMatch(/[\r\n]/);
  expect(text).not.toMatch(/\bat .*:\d+:\d+\)?$/);
  for (const [name, s] of Object.entries(hidden)) for (const core of s.cores) if (core.length >= 12) expect(text, name).not.toContain(core);
}

/** The worker reads its settings this way at start (worker/main.ts). */
const readWorkerSettings = (env: Record<string, string>) => () =>
  readAllSettings([() => parseWorkerEnv(env), () => loadConnectionConfig(env), () => encryptionKeyFromEnv(env), () => tracingConfigFromEnv(env)]);

/** The client: its environment, then the flags of start and run, then the key it connects with (client/main.ts, client/sessions.ts). */
const FLAG_NAMES = Object.keys(SESSION_FLAGS).filter((name) => name !== 'system-file') as (keyof typeof SESSION_FLAGS)[];
const flagValues = fc.dictionary(
  fc.constantFrom(...FLAG_NAMES),
  fc.oneof(anyValue, listValue, fc.constantFrom('read_file=30', 'abacus=5', '{"maxRetries":99}', 'off', '90s', '0.5')),
  { maxKeys: 4 },
);
const readClientSettings = (env: Record<string, string>, flags: Record<string, string>) => () => {
  const parsed = parseClientEnv(env);
  // Boolean flags are given as present; everything else as its text.
  const values = Object.fromEntries(Object.entries(flags).map(([name, value]) => [name, SESSION_FLAGS[name as keyof typeof SESSION_FLAGS].arg.type === 'boolean' ? true : value]));
  sessionOptionsFrom(values, parsed);
  encryptionKeyFromEnv(env);
};

describe('the settings readers (pure)', () => {
  it('refuse any worker environment in one line naming what is wrong, never a stack, never a secret', async () => {
    await assertProperty(
      400,
      fc.property(some({ ...WORKER_VARIABLES, ...CONNECTION_VARIABLES }), secrets, (plain, hidden) => {
        const refusal = refusalOf(readWorkerSettings(withSecrets(plain, hidden)));
        if (refusal !== undefined) expectOneLineWithoutSecrets(refusal, hidden);
      }),
    );
  });

  it('refuse any client environment and session flags in one line, never a stack, never a secret', async () => {
    await assertProperty(
      400,
      fc.property(some({ ...CLIENT_VARIABLES, ...CONNECTION_VARIABLES }), flagValues, secrets, (plain, flags, hidden) => {
        const refusal = refusalOf(readClientSettings(withSecrets(plain, hidden), flags));
        if (refusal !== undefined) expectOneLineWithoutSecrets(refusal, hidden);
      }),
    );
  });
});

/** Flags as argv: a known flag with a fuzzed value, an unknown flag, or a flag without its value. */
const argv = fc.array(
  fc.oneof(
    fc.tuple(fc.constantFrom(...FLAG_NAMES), anyValue).map(([name, value]) => (SESSION_FLAGS[name].arg.type === 'boolean' ? [`--${name}`] : [`--${name}`, value])),
    fc.constantFrom(['--max-steeps', '3'], ['--model'], ['-x'], ['--tools=']),
  ),
  { minLength: 1, maxLength: 3 },
);
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('the real processes', () => {
  it('the client refuses bad flags and variables with one line on stderr and exit 2, or fails to connect in one line with exit 1', async () => {
    await assertProperty(
      2,
      fc.asyncProperty(fc.constantFrom('start', 'run'), argv, some(CLIENT_VARIABLES), secrets, async (command, args, plain, hidden) => {
        // A process takes no NUL byte in its arguments or environment: no shell could pass one.
        fc.pre(![...args.flat(), ...Object.values(plain)].some((v) => v.includes('\u0000')));
        const prompt = command === 'run' ? ['--prompt', 'hi'] : [];
        const result = await runEntry('client/main.ts', [command, ...prompt, ...args.flat()], { ...withSecrets(plain, hidden), TEMPORAL_ADDRESS: NO_SERVER });
        const stderr = lines(result.stderr);
        expect(stderr, result.stderr).toHaveLength(1);
        expect(stderr[0]).toMatch(/^client: /);
        expect(result.code, result.stderr).toBe(/^client: cannot reach the Temporal server/.test(stderr[0] ?? '') ? 1 : 2);
        expectOneLineWithoutSecrets(stderr[0] ?? '', hidden);
        expect(result.stdout).toBe('');
      }),
      // A case is a whole CLI process: a long run tries a few more, not thousands.
      { maxRuns: 12 },
    );
  }, 120_000);

  it('the worker refuses bad variables with one line on stderr and exit 1, before it connects', async () => {
    await assertProperty(
      1,
      fc.asyncProperty(some(WORKER_VARIABLES), secrets, async (plain, hidden) => {
        fc.pre(!Object.values(plain).some((v) => v.includes('\u0000')));
        const result = await runEntry('worker/main.ts', [], { ...withSecrets(plain, hidden), TEMPORAL_ADDRESS: NO_SERVER, AGENT_WORKSPACE: tmpdir() });
        const stderr = lines(result.stderr);
        expect(stderr, result.stderr).toHaveLength(1);
        expect(stderr[0]).toMatch(/^worker: /);
        expect(result.code, result.stderr).toBe(1);
        expectOneLineWithoutSecrets(stderr[0] ?? '', hidden);
      }),
      { maxRuns: 12 },
    );
  }, 120_000);
});
