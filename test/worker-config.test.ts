import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from '../worker/config';
import { runEntry } from './support/cli';

describe('worker configuration', () => {
  it('defaults to localhost:7233, namespace default, task queue agent and the providers\' public URLs', () => {
    expect(parseWorkerEnv({})).toMatchObject({
      TEMPORAL_ADDRESS: 'localhost:7233',
      TEMPORAL_NAMESPACE: 'default',
      AGENT_TASK_QUEUE: 'agent',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      GEMINI_BASE_URL: 'https://generativelanguage.googleapis.com',
      AGENT_LOG_CACHE_MB: 128,
    });
    expect(parseWorkerEnv({ AGENT_LOG_CACHE_MB: '0' }).AGENT_LOG_CACHE_MB).toBe(0);
  });

  it.each([
    ['TEMPORAL_ADDRESS', 'not an address'],
    ['OPENAI_BASE_URL', 'ftp://example.com'],
    ['AGENT_LLM_IDLE_TIMEOUT_MS', 'soon'],
    ['AGENT_LOG_CACHE_MB', '-1'],
  ])('names %s when its value is bad, without echoing the value', (name, value) => {
    expect(() => parseWorkerEnv({ [name]: value })).toThrow(new RegExp(`^${name}: `));
    expect(() => parseWorkerEnv({ [name]: value })).not.toThrow(value);
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
