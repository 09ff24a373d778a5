import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from '../worker/config';
import { runEntry } from './support/cli';

describe('worker configuration', () => {
  it('defaults to task queue agent, the providers\' public URLs, a 30 s shutdown grace, no versioning', () => {
    expect(parseWorkerEnv({})).toMatchObject({
      AGENT_TASK_QUEUE: 'agent',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      GEMINI_BASE_URL: 'https://generativelanguage.googleapis.com',
      AGENT_LOG_CACHE_MB: 128,
      AGENT_SHUTDOWN_GRACE_MS: 30_000,
      AGENT_REGISTER_SEARCH_ATTRIBUTES: false,
    });
    expect(parseWorkerEnv({}).AGENT_DEPLOYMENT_NAME).toBeUndefined();
    expect(parseWorkerEnv({ AGENT_LOG_CACHE_MB: '0' }).AGENT_LOG_CACHE_MB).toBe(0);
  });

  it.each([
    ['AGENT_REGISTER_SEARCH_ATTRIBUTES', 'yes please'],
    ['AGENT_SHUTDOWN_GRACE_MS', 'half a minute'],
    ['OPENAI_BASE_URL', 'ftp://example.com'],
    ['AGENT_LLM_IDLE_TIMEOUT_MS', 'soon'],
    ['AGENT_LOG_CACHE_MB', '-1'],
  ])('names %s when its value is bad, without echoing the value', (name, value) => {
    expect(() => parseWorkerEnv({ [name]: value })).toThrow(new RegExp(`^${name}: `));
    expect(() => parseWorkerEnv({ [name]: value })).not.toThrow(value);
  });

  it('names every bad variable in one line, never their values', () => {
    let message = '';
    try {
      parseWorkerEnv({ AGENT_SHUTDOWN_GRACE_MS: 'half-a-minute', OPENAI_BASE_URL: 'ftp://secret-host', AGENT_LOG_CACHE_MB: '-7' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('\n')).toHaveLength(1);
    for (const name of ['AGENT_SHUTDOWN_GRACE_MS', 'OPENAI_BASE_URL', 'AGENT_LOG_CACHE_MB']) expect(message).toContain(`${name}: `);
    for (const value of ['half-a-minute', 'secret-host', '-7']) expect(message).not.toContain(value);
  });

  it('stops npm run worker with one line naming a bad variable of the worker, of the connection, of the encryption key and of tracing together', async () => {
    const result = await runEntry('worker/main.ts', [], { AGENT_LOG_CACHE_MB: 'lots', TEMPORAL_ADDRESS: 'no-port-here', AGENT_ENCRYPTION_KEY_ID: 'k1', OTEL_TRACES_SAMPLER: 'sometimes' });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^worker: AGENT_LOG_CACHE_MB: .*; TEMPORAL_ADDRESS: must be host:port; set both AGENT_ENCRYPTION_KEY and AGENT_ENCRYPTION_KEY_ID, or neither; OTEL_TRACES_SAMPLER is not valid: expected one of always_on, .*$/);
    expect(lines[0]).not.toContain('lots');
    expect(lines[0]).not.toContain('sometimes');
    expect(lines[0]).not.toContain('no-port-here');
  });

  it.each(['AGENT_SHUTDOWN_GRACE_MS', 'AGENT_LLM_IDLE_TIMEOUT_MS'])('refuses %s beyond the longest timer Node keeps (1e12 would fire after 1 ms), naming the maximum', (name) => {
    expect(() => parseWorkerEnv({ [name]: '1e12' })).toThrow(new RegExp(`^${name}: must be at most 2147483647 ms`));
    expect(parseWorkerEnv({ [name]: '2147483647' })[name as 'AGENT_SHUTDOWN_GRACE_MS']).toBe(2_147_483_647);
  });

  it('refuses AGENT_HTTP_MAX_RESPONSE_BYTES above what a tool result may carry (1 MiB), naming the maximum', () => {
    expect(() => parseWorkerEnv({ AGENT_HTTP_MAX_RESPONSE_BYTES: '1048577' })).toThrow(/^AGENT_HTTP_MAX_RESPONSE_BYTES: must be at most 1048576 bytes/);
    expect(parseWorkerEnv({ AGENT_HTTP_MAX_RESPONSE_BYTES: '1048576' }).AGENT_HTTP_MAX_RESPONSE_BYTES).toBe(1_048_576);
  });

  it('refuses a malformed AGENT_HTTP_ALLOWLIST entry when the environment is read, naming the variable and the entry', () => {
    expect(() => parseWorkerEnv({ AGENT_HTTP_ALLOWLIST: 'api.example.com,exa mple.com' })).toThrow(/^AGENT_HTTP_ALLOWLIST: invalid entry "exa mple\.com": /);
    expect(() => parseWorkerEnv({ AGENT_HTTP_ALLOWLIST: 'localhost:99999' })).toThrow(/^AGENT_HTTP_ALLOWLIST: invalid entry "localhost:99999": port must be 1-65535$/);
    expect(parseWorkerEnv({ AGENT_HTTP_ALLOWLIST: 'api.example.com, 127.0.0.1:8080' }).AGENT_HTTP_ALLOWLIST).toEqual(['api.example.com', '127.0.0.1:8080']);
  });

  it.each([
    ['AGENT_HTTP_ALLOWLIST', 'localhost:http', /^worker: AGENT_HTTP_ALLOWLIST: invalid entry "localhost:http": /],
    ['AGENT_HTTP_MAX_RESPONSE_BYTES', '5000000', /^worker: AGENT_HTTP_MAX_RESPONSE_BYTES: must be at most 1048576 bytes/],
  ])('stops npm run worker on a bad %s in one line, before it connects, without a stack', async (name, value, line) => {
    // Nothing listens on localhost:1: a worker that got as far as connecting would say it cannot reach it.
    const result = await runEntry('worker/main.ts', [], { [name]: value, TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(line)]);
  });

  it('needs both AGENT_DEPLOYMENT_NAME and AGENT_BUILD_ID for Worker Versioning, naming the missing one', () => {
    expect(() => parseWorkerEnv({ AGENT_DEPLOYMENT_NAME: 'agent' })).toThrow(/^AGENT_BUILD_ID: required with AGENT_DEPLOYMENT_NAME/);
    expect(() => parseWorkerEnv({ AGENT_BUILD_ID: 'v2' })).toThrow(/^AGENT_DEPLOYMENT_NAME: required with AGENT_BUILD_ID/);
    expect(parseWorkerEnv({ AGENT_DEPLOYMENT_NAME: 'agent', AGENT_BUILD_ID: 'v2' })).toMatchObject({ AGENT_DEPLOYMENT_NAME: 'agent', AGENT_BUILD_ID: 'v2' });
  });

  it('stops npm run worker with one line naming the variable', async () => {
    const result = await runEntry('worker/main.ts', [], { ANTHROPIC_BASE_URL: 'not-a-url' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('worker: ANTHROPIC_BASE_URL: ANTHROPIC_BASE_URL must be an http(s) URL');
  });
});

describe('worker start-up', () => {
  it('says in one line when the Temporal server cannot be reached', async () => {
    const result = await runEntry('worker/main.ts', [], { TEMPORAL_ADDRESS: 'localhost:1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^worker: cannot reach the Temporal server at localhost:1 \(TEMPORAL_ADDRESS\)/);
  });
});
