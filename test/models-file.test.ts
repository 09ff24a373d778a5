import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClientEnv } from '../client/config';
import { sessionOptionsFrom } from '../client/commands/session-options';
import { loadModelWindows } from '../client/models-file';
import { knownWindow } from '../client/sessions';
import { ConfigError } from '../config/config-error';
import { MODEL_WINDOWS } from '../contracts/model-windows';
import { runEntry } from './support/cli';
import { useTempDir } from './support/temp-dir';

const dir = useTempDir('models-file-');

let files = 0;
async function modelsFile(content: unknown): Promise<string> {
  const file = path.join(dir(), `models-${++files}.json`);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The one line a bad file is refused with. */
function refusal(file: string): string {
  try {
    loadModelWindows(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`${file} was accepted`);
}

describe('AGENT_MODELS_FILE', () => {
  it('unset, is the table of known models', () => {
    expect(loadModelWindows(undefined)).toBe(MODEL_WINDOWS);
  });

  it('replaces the entries it names and adds new ones; the rest of the table stays', async () => {
    const file = await modelsFile({
      'anthropic:claude-sonnet-4-5': { contextWindow: 1_000_000, maxOutputTokens: 64_000 },
      'openai:local-llama': { contextWindow: 8_192, maxOutputTokens: 2_048 },
    });
    const table = loadModelWindows(file);
    expect(table['anthropic:claude-sonnet-4-5']).toEqual({ contextWindow: 1_000_000, maxOutputTokens: 64_000 });
    expect(table['openai:local-llama']).toEqual({ contextWindow: 8_192, maxOutputTokens: 2_048 });
    expect(table['openai:gpt-4o']).toEqual(MODEL_WINDOWS['openai:gpt-4o']);
    expect(Object.keys(table)).toHaveLength(Object.keys(MODEL_WINDOWS).length + 1);
  });

  it.each([
    [{ 'gpt-x': { contextWindow: 8_000, maxOutputTokens: 1_000 } }, 'AGENT_MODELS_FILE: entry "gpt-x": must be provider:model (anthropic, openai or google)'],
    [{ 'openai:x': { contextWindow: '8k', maxOutputTokens: 1_000 } }, 'AGENT_MODELS_FILE: entry "openai:x": contextWindow: must be a whole number of tokens (contextWindow)'],
    [{ 'openai:x': { contextWindow: 8_000 } }, 'AGENT_MODELS_FILE: entry "openai:x": maxOutputTokens: must be a whole number of tokens (maxOutputTokens)'],
    [{ 'openai:x': { contextWindow: 8_000, maxOutputTokens: 1_000, price: 3 } }, 'AGENT_MODELS_FILE: entry "openai:x": Unrecognized key: "price"'],
    [{ 'openai:tiny': { contextWindow: 512, maxOutputTokens: 100 } }, 'AGENT_MODELS_FILE: entry "openai:tiny": contextWindow must be a whole number from 1000 to 10000000'],
    [[{ contextWindow: 8_000 }], 'AGENT_MODELS_FILE: must be a JSON object of "provider:model": { "contextWindow": N, "maxOutputTokens": N } entries'],
  ])('refuses %j in one line naming the variable and the entry', async (content, line) => {
    expect(refusal(await modelsFile(content))).toBe(line);
  });

  it('refuses a file that is not JSON without repeating its text, and a file it cannot read', async () => {
    const file = await modelsFile('{ "openai:x": sk-not-a-window }');
    const line = refusal(file);
    expect(line).toBe(`AGENT_MODELS_FILE: ${JSON.stringify(file)} is not valid JSON`);
    expect(line).not.toContain('sk-not');
    const missing = path.join(dir(), 'none.json');
    expect(refusal(missing)).toBe(`AGENT_MODELS_FILE: cannot read ${JSON.stringify(missing)}: ENOENT: no such file or directory`);
  });

  it('is read with the rest of the client environment: its mistake is named beside the others, in one line', async () => {
    const file = await modelsFile({ 'openai:x': { contextWindow: 0, maxOutputTokens: 1 } });
    expect(() => parseClientEnv({ AGENT_MAX_STEPS: 'many', AGENT_MODELS_FILE: file })).toThrow(
      /^AGENT_MAX_STEPS: .*; AGENT_MODELS_FILE: entry "openai:x": contextWindow: must be a whole number of tokens \(contextWindow\)$/,
    );
    expect(parseClientEnv({ AGENT_MODELS_FILE: '' }).modelWindows).toBe(MODEL_WINDOWS);
  });

  it('stops start and run with exit code 2 and that line, before contacting the server', async () => {
    const file = await modelsFile({ 'openai:x': { contextWindow: 8_000 } });
    for (const command of [['start'], ['run', '--prompt', 'hi']]) {
      const result = await runEntry('client/main.ts', command, { TEMPORAL_ADDRESS: 'localhost:1', AGENT_MODELS_FILE: file });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual(['client: AGENT_MODELS_FILE: entry "openai:x": maxOutputTokens: must be a whole number of tokens (maxOutputTokens)']);
    }
  });
});

describe("a session's context window, as start and run give it", () => {
  /** The flags' options, then the window startSession adds from the client's table. */
  const sessionInputFrom = (flags: Parameters<typeof sessionOptionsFrom>[0], env: ReturnType<typeof parseClientEnv>) => {
    const options = sessionOptionsFrom(flags, env);
    return { ...options, ...knownWindow(options, env.modelWindows) };
  };
  const withFile = async () =>
    parseClientEnv({ AGENT_MODELS_FILE: await modelsFile({ 'openai:local-llama': { contextWindow: 8_192, maxOutputTokens: 2_048 }, 'openai:gpt-4o': { contextWindow: 64_000, maxOutputTokens: 4_096 } }) });

  it("is the known model's window from the table when --context-window is not given, also for a dated snapshot", () => {
    const env = parseClientEnv({});
    expect(sessionInputFrom({}, env)).toMatchObject({ model: 'anthropic:claude-sonnet-4-5', contextWindow: MODEL_WINDOWS['anthropic:claude-sonnet-4-5']?.contextWindow });
    expect(sessionInputFrom({ model: 'openai:gpt-4.1-2025-04-14' }, env).contextWindow).toBe(MODEL_WINDOWS['openai:gpt-4.1']?.contextWindow);
  });

  it('is the models file\'s window for a model it adds or replaces', async () => {
    const env = await withFile();
    expect(sessionInputFrom({ model: 'openai:local-llama' }, env).contextWindow).toBe(8_192);
    expect(sessionInputFrom({ model: 'openai:gpt-4o' }, env).contextWindow).toBe(64_000);
  });

  it('is --context-window when given, whatever the table says', async () => {
    const env = await withFile();
    expect(sessionInputFrom({ model: 'openai:gpt-4o', 'context-window': '20000' }, env).contextWindow).toBe(20_000);
    expect(sessionInputFrom({ model: 'openai:someone-elses-model', 'context-window': '5000' }, env).contextWindow).toBe(5_000);
  });

  it('is absent for a model neither the table nor the file knows: the session does not compact', async () => {
    const options = sessionInputFrom({ model: 'openai:someone-elses-model' }, await withFile());
    expect('contextWindow' in options).toBe(false);
  });
});
