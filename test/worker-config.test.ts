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
