/**
 * `/openapi.json`: the OpenAPI 3.1 document the gateway generates from its routes' zod
 * schemas, checked by a standard validator (@seriousme/openapi-schema-validator), and
 * holding every route the app serves, each behind the bearer key but the health check.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../gateway/app';
import { isPublic } from '../gateway/auth';
import { startLocalGateway, type LocalGateway } from '../harness/gateway';
import { devServerAddress, devServerNamespace, uniqueTaskQueue } from './temporal-env';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
  security: Record<string, string[]>[];
}

let gw: LocalGateway;
let doc: Document;

beforeAll(async () => {
  gw = await startLocalGateway({ address: devServerAddress(), namespace: devServerNamespace(), taskQueue: uniqueTaskQueue('gateway-openapi') });
  const answer = await gw.request('/openapi.json');
  expect(answer.status).toBe(200);
  doc = (await answer.json()) as Document;
});

afterAll(async () => {
  await gw?.close();
});

/** `/v1/sessions/:id` → `/v1/sessions/{id}`, as OpenAPI writes a path. */
const openApiPath = (honoPath: string) => honoPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('holds every route the app serves, but the chat page’s files', async () => {
    const gateway = createGateway({ client: gw.client, env: gw.env, keys: gw.entries });
    // The page's files (`/`, `/chat/*`) are static, outside the API; the health check is public and in it.
    const served = gateway.app.routes.filter((r) => r.method !== 'ALL' && (r.path === '/health' || !isPublic(r.method, r.path)));
    await gateway.close();
    expect(served.length).toBeGreaterThan(10);
    const missing = served.filter((r) => doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()] === undefined).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    for (const route of ['post /v1/sessions', 'get /v1/sessions', 'get /v1/sessions/{id}', 'get /v1/sessions/{id}/log', 'post /v1/sessions/{id}/messages', 'post /v1/sessions/{id}/cancel', 'post /v1/sessions/{id}/approvals/{callId}', 'put /v1/sessions/{id}/budget', 'put /v1/sessions/{id}/retry-policy', 'post /v1/sessions/{id}/fork', 'post /v1/sessions/{id}/end', 'get /v1/agents', 'get /openapi.json', 'get /health']) {
      const [method = '', p = ''] = route.split(' ');
      expect(doc.paths[p]?.[method], route).toBeDefined();
    }
  });

  it('puts every operation but the health check behind the bearer key', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [p, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const security = operation.security ?? doc.security;
        if (p === '/health') expect(security, `${method} ${p}`).toEqual([]);
        else expect(security, `${method} ${p}`).toEqual([{ bearer: [] }]);
      }
    }
  });

  it('answers every operation but the health check 401 without a key, as the document says', async () => {
    const open: string[] = [];
    for (const [p, operations] of Object.entries(doc.paths)) {
      if (p === '/health') continue;
      for (const method of Object.keys(operations)) {
        const answer = await gw.request(p.replace(/\{[^}]+\}/g, 'x'), { key: null, method: method.toUpperCase(), ...(method === 'get' ? {} : { json: {} }) });
        if (answer.status !== 401) open.push(`${method} ${p}: ${answer.status}`);
        await answer.body?.cancel();
      }
    }
    expect(open).toEqual([]);
  });

  it('is the route table of docs/gateway.md, row for row', async () => {
    const text = await readFile(path.join(import.meta.dirname, '..', 'docs', 'gateway.md'), 'utf8');
    const documented = [...text.matchAll(/^\| `(GET|POST|PUT|DELETE|PATCH) (\/[^`]*)` \|/gm)].map(([, method = '', p = '']) => `${method} ${p}`);
    const declared = Object.entries(doc.paths).flatMap(([p, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${p}`));
    expect([...documented].sort()).toEqual([...declared].sort());
  });
});

describe('docs/gateway.md, as a program of one’s own runs it', () => {
  it('serves the gateway with serveGateway and a key from newGatewayKey', async () => {
    const root = path.join(import.meta.dirname, '..');
    const doc = await readFile(path.join(root, 'docs', 'gateway.md'), 'utf8');
    const block = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '').find((text) => text.startsWith('// my-gateway.ts\n'));
    if (block === undefined) throw new Error('docs/gateway.md has no ts block starting "// my-gateway.ts"');
    const pointed = block
      .replace("'durable-agent-worker/client'", JSON.stringify(path.join(root, 'client', 'index.ts')))
      .replace("'durable-agent-worker/gateway'", JSON.stringify(path.join(root, 'gateway', 'index.ts')));
    // Inside the project, so the example's imports resolve from its node_modules.
    await mkdir(path.join(root, '.data'), { recursive: true });
    const file = path.join(await mkdtemp(path.join(root, '.data', 'gateway-doc-')), 'my-gateway.ts');
    await writeFile(file, pointed);
    const printed = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    vi.stubEnv('TEMPORAL_ADDRESS', devServerAddress());
    vi.stubEnv('TEMPORAL_NAMESPACE', devServerNamespace());
    try {
      await import(file);
      expect(printed.mock.calls).toEqual([[200, '3.1.0']]);
    } finally {
      printed.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});
