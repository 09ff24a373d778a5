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
