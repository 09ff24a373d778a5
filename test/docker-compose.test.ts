/**
 * docker-compose.yml cannot run here (no Docker engine), so this is its specification:
 * what a user with Docker gets, read from the file itself.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { NATS_SERVER, PROJECT_ROOT } from '../harness/temporal-binaries';
import { parseReplies } from '../testing/scripted-llm/script';
import { AGENT_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { ensureBuilt } from '../scripts/build';
import { startHarness } from './support/agent-harness';
import { dockerStage, instructionsOf, readDockerfile } from './support/dockerfile';

interface Service {
  image?: string;
  build?: { context: string; target?: string; args?: Record<string, string> };
  command?: string | string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string | string[] };
  environment?: Record<string, string>;
  profiles?: string[];
  volumes?: string[];
  user?: string;
}

const read = (file: string): string => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

// `merge: true`: the Node services share their build and environment through a YAML merge key.
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service>; configs: Record<string, { content?: string }> };
const services = compose.services;
const stages = readDockerfile();
const runtimeStage = dockerStage(stages);
const dotEnv = Object.fromEntries(
  read('.env')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)] as const;
    }),
);

function service(name: string): Service {
  const found = services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

function commandText(s: Service): string {
  return Array.isArray(s.command) ? s.command.join(' ') : (s.command ?? '');
}

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, the schema job, the server, the UI, the scripted LLM, the worker, the gateway, a demo client, and a NATS fleet', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['demo', 'gateway', 'gateway-multi', 'gateway-volumes', 'nats', 'postgresql', 'scripted-llm', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker', 'worker-multi'].sort(),
    );
  });

  it("publishes gRPC on 7233, the Web UI on 8080 and the gateways on the host's loopback only, and nothing else", () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name} ${p}`));
    expect(published.sort()).toEqual(['gateway 127.0.0.1:8787:8787', 'gateway-multi 127.0.0.1:8788-8789:8787', 'temporal 7233:7233', 'temporal-ui 8080:8080']);
  });

  it('takes every image tag from a version pinned in .env', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.image === undefined) continue;
      const match = /^[\w./-]+:\$\{(\w+)\}$/.exec(s.image);
      expect(match, `${name}: image "${s.image}" should be name:\${VERSION_VARIABLE}`).not.toBeNull();
      const variable = match?.[1] ?? '';
      expect(dotEnv[variable], `${name}: .env should pin ${variable}`).toMatch(/^\d+(\.\d+)*$/);
    }
    expect(service('postgresql').image).toBe('postgres:${POSTGRESQL_VERSION}');
    expect(service('temporal').image).toBe('temporalio/server:${TEMPORAL_VERSION}');
    expect(service('temporal-schema').image).toBe('temporalio/admin-tools:${TEMPORAL_ADMINTOOLS_VERSION}');
    expect(service('temporal-ui').image).toBe('temporalio/ui:${TEMPORAL_UI_VERSION}');
    // The broker is the nats-server the tests run (harness/nats-server.ts).
    expect(service('nats').image).toBe('nats:${NATS_VERSION}');
    expect(dotEnv.NATS_VERSION).toBe(NATS_SERVER.version);
  });

  it("builds the worker and the demo client from the Dockerfile's runtime stage, the scripted LLM from its dev stage, on the Node version pinned in .env", () => {
    const build = (target: string) => ({ context: '.', target, args: { NODE_VERSION: '${NODE_VERSION}' } });
    for (const name of ['worker', 'demo', 'gateway', 'gateway-volumes', 'worker-multi', 'gateway-multi']) expect(service(name).build, name).toEqual(build(runtimeStage.name));
    expect(service('scripted-llm').build).toEqual(build('dev'));
    expect(stages.map((s) => s.name)).toEqual(['dev', 'runtime']);
    expect(dotEnv.NODE_VERSION).toMatch(/^20\.\d+\.\d+$/);
  });

  it('starts each service only when what it needs is ready', () => {
    const conditions = Object.fromEntries(
      Object.entries(services).map(([name, s]) => [
        name,
        Object.fromEntries(Object.entries(s.depends_on ?? {}).map(([dep, { condition }]) => [dep, condition])),
      ]),
    );
    expect(conditions).toEqual({
      postgresql: {},
      'temporal-schema': { postgresql: 'service_healthy' },
      temporal: { 'temporal-schema': 'service_completed_successfully' },
      'temporal-setup': { temporal: 'service_healthy' },
      'temporal-ui': { temporal: 'service_healthy' },
      'scripted-llm': {},
      worker: { 'temporal-setup': 'service_completed_successfully', 'scripted-llm': 'service_healthy', 'gateway-volumes': 'service_completed_successfully' },
      'gateway-volumes': {},
      gateway: { 'temporal-setup': 'service_completed_successfully', 'gateway-volumes': 'service_completed_successfully' },
      nats: {},
      'worker-multi': { 'temporal-setup': 'service_completed_successfully', 'scripted-llm': 'service_healthy', nats: 'service_started' },
      'gateway-multi': { 'temporal-setup': 'service_completed_successfully', 'gateway-volumes': 'service_completed_successfully', nats: 'service_started' },
      demo: { 'temporal-setup': 'service_completed_successfully', 'scripted-llm': 'service_healthy', worker: 'service_started' },
    });
  });

  it('health-checks every service that another one waits for as healthy', () => {
    const awaitedHealthy = new Set(
      Object.values(services).flatMap((s) =>
        Object.entries(s.depends_on ?? {})
          .filter(([, { condition }]) => condition === 'service_healthy')
          .map(([dep]) => dep),
      ),
    );
    expect([...awaitedHealthy].sort()).toEqual(['postgresql', 'scripted-llm', 'temporal']);
    for (const name of awaitedHealthy) {
      const test = service(name).healthcheck?.test;
      expect(test, `${name} needs a healthcheck`).toBeDefined();
      expect(Array.isArray(test) ? test[0] : test).toMatch(/^(CMD|CMD-SHELL)$/);
    }
  });

  it('migrates both PostgreSQL databases with the admin-tools schema tool', () => {
    const script = commandText(service('temporal-schema'));
    expect(script).toContain('temporal-sql-tool --plugin postgres12 --ep postgresql');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/temporal/versioned');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/visibility/versioned');
  });

  it('registers the same search attributes as contracts/search-attributes.ts', () => {
    const cliType = (type: string): string =>
      type
        .toLowerCase()
        .split('_')
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
        .join('');
    const expected = AGENT_SEARCH_ATTRIBUTES.map((key) => `${key.name}=${cliType(key.type)}`);
    expect(service('temporal-setup').environment?.AGENT_SEARCH_ATTRIBUTES?.split(' ')).toEqual(expected);
  });

  it('points the worker at the server and, by default, at the scripted LLM for every provider', () => {
    const env = service('worker').environment ?? {};
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.TEMPORAL_NAMESPACE).toBe('default');
    expect(env.AGENT_TASK_QUEUE).toBe('agent');
    for (const variable of ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'GEMINI_BASE_URL']) {
      expect(env[variable], variable).toMatch(new RegExp(`^\\$\\{${variable}:-http://scripted-llm:8787(/v1)?\\}$`));
    }
    expect(commandText(service('scripted-llm'))).toBe('node bin/launch.js testing/scripted-llm/main.ts --host 0.0.0.0');
    expect(service('worker').command).toEqual(instructionsOf(runtimeStage, 'CMD')[0]?.exec);
  });

  it('runs the demo session only under the "demo" profile, and the broker and its fleet only under "multi"', () => {
    const profiles = Object.fromEntries(Object.entries(services).flatMap(([name, s]) => (s.profiles ? [[name, s.profiles]] : [])));
    expect(profiles).toEqual({ demo: ['demo'], nats: ['multi'], 'worker-multi': ['multi'], 'gateway-multi': ['multi'] });
  });

  it("runs the compiled gateway with the worker's environment, its keys in a volume, and the worker's live stream through a socket in a volume they share", () => {
    const gateway = service('gateway');
    expect(gateway.command).toEqual(['node', 'dist/gateway/main.js']);
    const { AGENT_GATEWAY_HOST, AGENT_GATEWAY_PORT, AGENT_GATEWAY_KEYS_FILE, TEMPORAL_UI_URL, ...shared } = gateway.environment ?? {};
    expect(shared).toEqual(service('worker').environment);
    // Every interface inside its container; the host publishes it on loopback only (above).
    expect([AGENT_GATEWAY_HOST, AGENT_GATEWAY_PORT, TEMPORAL_UI_URL]).toEqual(['0.0.0.0', '8787', 'http://localhost:8080']);
    expect(AGENT_GATEWAY_KEYS_FILE).toBe('/keys/gateway-keys.json');
    expect(gateway.volumes).toEqual(['gateway-keys:/keys', 'live-stream:/live']);
    // The embedded live stream (no AGENT_LIVE_STREAM: its default) on a socket both mount.
    expect(shared.AGENT_LIVE_STREAM).toBeUndefined();
    expect(path.posix.dirname(shared.AGENT_LIVE_STREAM_SOCKET ?? '')).toBe('/live');
    expect(service('worker').volumes).toEqual(['live-stream:/live']);
    // The volumes start out root's: a one-shot job gives them to the node user the services run as.
    const init = service('gateway-volumes');
    expect(init.user).toBe('root');
    expect(commandText(init)).toContain('chown node:node /keys /live');
    expect(commandText(init)).toContain('chmod 0700 /live');
    expect(instructionsOf(runtimeStage, 'USER').at(-1)?.text).toBe('node');
  });

  it('runs the "multi" fleet on the NATS broker: its workers and gateways on a task queue of their own, so each of its sessions publishes to the broker', () => {
    const worker = service('worker-multi').environment ?? {};
    const gateway = service('gateway-multi').environment ?? {};
    for (const env of [worker, gateway]) expect(env.AGENT_LIVE_STREAM).toBe('nats://nats:4222');
    expect(worker.AGENT_TASK_QUEUE).toBe('agent-multi');
    expect(gateway.AGENT_TASK_QUEUE).toBe('agent-multi');
    expect(service('worker').environment?.AGENT_TASK_QUEUE).not.toBe('agent-multi');
    expect(service('worker-multi').command).toEqual(service('worker').command);
    expect(service('gateway-multi').command).toEqual(service('gateway').command);
    const { AGENT_TASK_QUEUE: _queue, AGENT_LIVE_STREAM: _stream, ...rest } = gateway;
    const { AGENT_TASK_QUEUE: _defaultQueue, ...defaults } = service('gateway').environment ?? {};
    expect(rest).toEqual(defaults);
  });

  it('gives the demo the worker\'s environment, and a UI link that opens on the published UI port', () => {
    const { TEMPORAL_UI_URL, DEMO_MODEL, DEMO_PROMPT, DEMO_SCRIPT_URL, ...shared } = service('demo').environment ?? {};
    expect(shared).toEqual(service('worker').environment);
    expect(TEMPORAL_UI_URL).toBe('http://localhost:8080');
    expect(DEMO_SCRIPT_URL).toBe(`http://scripted-llm:8787/_scripted/${DEMO_MODEL}`);
    expect(DEMO_PROMPT).toBe('What is (17 + 25) * 2? Use the calculator.');
    expect(commandText(service('demo'))).toMatch(/exec node dist\/client\/main\.js run --prompt "\$\$DEMO_PROMPT" --model "anthropic:\$\$DEMO_MODEL"\n$/);
  });

  it("scripts the demo with replies the scripted LLM accepts: npm start's overloaded reply, calculator call and answer", () => {
    const replies = parseReplies('scripted-demo', JSON.parse(compose.configs['demo-script']?.content ?? 'null'));
    expect(replies.map((r) => r.kind)).toEqual(['status', 'tool_calls', 'text']);
    expect(replies[0]).toMatchObject({ status: 529, headers: { 'retry-after': expect.any(String) } });
    expect(replies[1]).toMatchObject({ calls: [{ name: 'calculator', input: { expression: '(17 + 25) * 2' } }] });
  });

  it('plays the demo end to end when its own command runs against a worker and the scripted LLM (without Docker)', async () => {
    // The command runs the compiled client, as the runtime image holds it.
    await ensureBuilt();
    // The gateway's service runs the compiled gateway, which serves the chat page's files copied beside it.
    for (const file of ['gateway/main.js', 'gateway/page/assets/index.html', 'gateway/page/assets/chat.js']) expect(existsSync(path.join(PROJECT_ROOT, 'dist', file)), file).toBe(true);
    const h = await startHarness();
    const dir = await mkdtemp(path.join(tmpdir(), 'compose-demo-'));
    try {
      const demo = service('demo');
      const scriptFile = path.join(dir, 'script.json');
      await writeFile(scriptFile, compose.configs['demo-script']?.content ?? '');
      // Compose would unescape `$$` and mount the config at /demo/script.json; the rest is the file's own text.
      const [shell, flag, script] = (demo.command as string[]).map((part) => part.replaceAll('$$', '$').replaceAll('/demo/script.json', scriptFile));
      const result = await runCommand(shell ?? '', [flag ?? '', script ?? ''], {
        ...demo.environment,
        DEMO_SCRIPT_URL: `${h.llm.url}/_scripted/${demo.environment?.DEMO_MODEL}`,
        TEMPORAL_ADDRESS: h.env.TEMPORAL_ADDRESS,
        TEMPORAL_NAMESPACE: h.env.TEMPORAL_NAMESPACE,
        AGENT_TASK_QUEUE: h.taskQueue,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/retrying in \d+ s \(attempt 2\/11\): overloaded/);
      expect(result.stdout).toMatch(/✓ calculator: 84/);
      expect(result.stdout).toContain('(17 + 25) × 2 = 84.');
      expect(result.stdout).toContain('turn completed');
      expect(result.stdout).toMatch(/^UI http:\/\/localhost:8080\/namespaces\/default\/workflows\/session-/m);
      expect(h.llm.requests({ model: 'scripted-demo' }).map((r) => r.replyKind)).toEqual(['status', 'tool_calls', 'text']);
    } finally {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    }
    // Above a build and the demo command's own 120 s limit.
  }, 300_000);
});

/** A command as a child process, in the project folder; npm must be on PATH, as it is wherever the tests run. */
function runCommand(command: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

// What a stage's instructions say, one kind at a time: `COPY` → ['package.json package-lock.json ./', …].
const texts = (stage: string, keyword: string): string[] => instructionsOf(dockerStage(stages, stage), keyword).map((i) => i.text);

describe('Dockerfile', () => {
  it('builds both stages from node:<NODE_VERSION>-slim', () => {
    expect(read('Dockerfile')).toMatch(/^ARG NODE_VERSION=\S+$/m);
    for (const stage of stages) expect(stage.from, stage.name).toBe('node:${NODE_VERSION}-slim');
  });

  it('compiles in the dev stage: every dependency from the lockfile, then npm run build over the whole context', () => {
    expect(texts('dev', 'RUN')).toEqual(['npm ci --no-audit --no-fund', 'npm run build']);
    expect(texts('dev', 'COPY')).toEqual(['package.json package-lock.json ./', '. .']);
    // The lockfile's install before the sources arrive, so a source change reuses its layer.
    expect(dockerStage(stages, 'dev').instructions.map((i) => i.keyword)).toEqual(['WORKDIR', 'COPY', 'RUN', 'COPY', 'RUN', 'USER']);
  });

  it('copies into the runtime stage, the default target, the package files, bin/ and the compiled dist/ only', () => {
    expect(runtimeStage.name).toBe('runtime');
    const copies = instructionsOf(runtimeStage, 'COPY').map((i) => `${i.flags.from ?? 'context'}: ${i.text}`);
    expect(copies).toEqual(['context: package.json package-lock.json ./', 'context: bin ./bin', 'dev: /app/dist ./dist']);
  });

  it('installs production dependencies only in the runtime stage, from the lockfile', () => {
    expect(texts('runtime', 'RUN').filter((text) => text.startsWith('npm '))).toEqual(['npm ci --omit=dev --no-audit --no-fund']);
  });

  it('runs the compiled worker under plain node, as the node user that owns the working folder', () => {
    const [cmd, ...more] = instructionsOf(runtimeStage, 'CMD');
    expect(more).toEqual([]);
    expect(cmd?.exec).toEqual(['node', 'dist/worker/main.js']);
    expect(instructionsOf(runtimeStage, 'ENTRYPOINT')).toEqual([]);
    expect(texts('runtime', 'USER').at(-1)).toBe('node');
    // The worker makes its default workspace (.data/workspace) under the working folder.
    expect(texts('runtime', 'WORKDIR')).toEqual(['/app']);
    expect(texts('runtime', 'RUN')).toContain('chown node:node /app');
  });

  it('keeps host-only folders and a host build out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', '.temporal', '.data', '.env']) expect(ignored).toContain(entry);
  });
});
