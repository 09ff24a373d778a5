import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { checkedRateLimit } from './rate-limit';
import { parseReplies, type ScriptedReply } from './script';
import { isLoopback, startScriptedLlm } from './server';

/**
 * `npm run llm`: the scripted LLM as a process of its own, driven over `/_scripted/…`.
 *
 *   --port N       or SCRIPTED_LLM_PORT   default 8787 (0 picks a free port)
 *   --host H       or SCRIPTED_LLM_HOST   default 127.0.0.1; loopback only unless
 *                  SCRIPTED_LLM_ALLOW_NON_LOOPBACK=1 (a container network, where the other
 *                  services reach it by name and nothing else can)
 *   --script FILE  a JSON object { "model": [reply, …], … } queued at start
 *   --context-window N  or SCRIPTED_LLM_CONTEXT_WINDOW: every model's context window in
 *                  tokens (JSON characters / 4); a larger request gets the provider's
 *                  context-overflow error. Default none; per model over `/_scripted/_window`
 *   --rate-limit JSON  or SCRIPTED_LLM_RATE_LIMIT: every model's rate limit, e.g.
 *                  '{"inputTokens":40000,"windowMs":60000}' (rate-limit.ts); above it a request
 *                  gets the provider's own 429. Default none; per model over `/_scripted/_rate_limit`
 *   --refuse-unscripted  or SCRIPTED_LLM_REFUSE_UNSCRIPTED=1: a model with nothing scripted
 *                  gets a loud 400 naming it instead of the offline demo model's answer
 *                  (demo-model.ts), for a script that must not run short unnoticed
 *   --verbose      one line per model request: provider, model, reply kind, outcome, duration
 *
 * Prints one line, `scripted LLM listening on http://HOST:PORT`, and runs until SIGINT or SIGTERM.
 */

const allowNonLoopback = process.env.SCRIPTED_LLM_ALLOW_NON_LOOPBACK === '1';

const ConfigSchema = z.object({
  port: z.coerce.number().int().min(0).max(65_535),
  host: z.string().refine((host) => allowNonLoopback || isLoopback(host), {
    message: 'must be a loopback address (127.0.0.1, ::1, localhost), or set SCRIPTED_LLM_ALLOW_NON_LOOPBACK=1',
  }),
  contextWindow: z.coerce.number().int().positive().optional(),
});

async function loadScripts(path: string): Promise<Array<[string, ScriptedReply[]]>> {
  let file: unknown;
  try {
    file = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new Error(`--script ${path}: ${(error as Error).message}`);
  }
  const parsed = z.record(z.string(), z.unknown()).safeParse(file);
  if (!parsed.success) throw new Error(`--script ${path}: must be a JSON object { "model": [reply, …] }`);
  return Object.entries(parsed.data).map(([model, replies]) => [model, parseReplies(model, replies)]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      script: { type: 'string' },
      'context-window': { type: 'string' },
      'rate-limit': { type: 'string' },
      'refuse-unscripted': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
    strict: true,
  });

  const portSource = values.port !== undefined ? '--port' : 'SCRIPTED_LLM_PORT';
  const hostSource = values.host !== undefined ? '--host' : 'SCRIPTED_LLM_HOST';
  const windowSource = values['context-window'] !== undefined ? '--context-window' : 'SCRIPTED_LLM_CONTEXT_WINDOW';
  const parsed = ConfigSchema.safeParse({
    port: values.port ?? process.env.SCRIPTED_LLM_PORT ?? 8787,
    host: values.host ?? process.env.SCRIPTED_LLM_HOST ?? '127.0.0.1',
    contextWindow: values['context-window'] ?? (process.env.SCRIPTED_LLM_CONTEXT_WINDOW || undefined),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path[0] === 'port' ? portSource : issue?.path[0] === 'contextWindow' ? windowSource : hostSource;
    throw new Error(`${name}: ${issue?.message ?? 'invalid value'}`);
  }

  const rateLimitText = values['rate-limit'] ?? (process.env.SCRIPTED_LLM_RATE_LIMIT || undefined);
  const rateLimitSource = values['rate-limit'] !== undefined ? '--rate-limit' : 'SCRIPTED_LLM_RATE_LIMIT';
  let rateLimit: unknown;
  if (rateLimitText !== undefined) {
    try {
      rateLimit = JSON.parse(rateLimitText);
    } catch {
      throw new Error(`${rateLimitSource}: must be JSON such as {"inputTokens":40000,"windowMs":60000}`);
    }
  }

  // Read before listening, so a bad file stops the process before anyone can connect.
  const scripts = values.script === undefined ? [] : await loadScripts(values.script);

  const llm = await startScriptedLlm({
    ...parsed.data,
    ...(rateLimit === undefined ? {} : { rateLimit: withSource(rateLimitSource, () => checkedRateLimit('*', rateLimit)) }),
    allowNonLoopback,
    demo: !(values['refuse-unscripted'] || process.env.SCRIPTED_LLM_REFUSE_UNSCRIPTED === '1'),
    // Never the headers or the path: they may carry API keys.
    onSettled: values.verbose
      ? (r) =>
          process.stdout.write(
            `${r.provider} ${r.model || '(no model)'} ${r.replyKind} ${r.outcome} ${(r.endedAt ?? Date.now()) - r.at}ms\n`,
          )
      : undefined,
  });

  for (const [model, replies] of scripts) llm.script(model, ...replies);

  process.stdout.write(`scripted LLM listening on ${llm.url}\n`);

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await llm.close();
}

/** The setting's name in front of its one-line error, as for the other settings. */
function withSource<T>(source: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new Error(`${source}: ${(error as Error).message.replace(/^scripted LLM: /, '')}`);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message.startsWith('scripted LLM') ? message : `scripted LLM: ${message}`}\n`);
  process.exit(1);
});
