/**
 * Tracing is configured by the standard OTEL_* variables only, and off without an
 * endpoint: then no OpenTelemetry SDK module is even loaded by the worker or the client.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error';
import { tracingConfigFromEnv } from '../tracing/tracing-config';

const ROOT = path.join(import.meta.dirname, '..');

describe('tracing configuration (unit)', () => {
  it('is off without an OTLP endpoint, also when the other OTEL_* variables are set or the endpoint is empty', () => {
    expect(tracingConfigFromEnv({})).toBeUndefined();
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SERVICE_NAME: 'agent', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
  });

  it('sends to /v1/traces under OTEL_EXPORTER_OTLP_ENDPOINT, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, by http/protobuf unless told http/json', () => {
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318/' })).toEqual({ endpoint: 'http://localhost:4318/v1/traces', protocol: 'http/protobuf', content: false });
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', AGENT_TRACE_CONTENT: 'true' })).toEqual({
      endpoint: 'https://collector.example/otlp',
      protocol: 'http/json',
      content: true,
    });
  });

  it('keeps failure messages out of spans when payloads are encrypted, unless AGENT_TRACE_CONTENT=true asks for content', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    const key = { AGENT_ENCRYPTION_KEY: 'c2VjcmV0LWtleS1vZi10aGlydHktdHdvLWJ5dGVzISE=', AGENT_ENCRYPTION_KEY_ID: 'k1' };
    expect(tracingConfigFromEnv({ ...endpoint, ...key })?.redactFailures).toBe(true);
    expect(tracingConfigFromEnv({ ...endpoint, ...key, AGENT_TRACE_CONTENT: 'true' })?.redactFailures).toBeUndefined();
    expect(tracingConfigFromEnv(endpoint)?.redactFailures).toBeUndefined();
  });

  it('refuses a bad value in one line naming the variable, never echoing the value', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318-secret' }, /^OTEL_EXPORTER_OTLP_ENDPOINT is not valid: expected an http:\/\/ or https:\/\/ URL$/],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc-secret' }, /^OTEL_EXPORTER_OTLP_PROTOCOL is not valid: expected http\/protobuf or http\/json$/],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_TRACES_SAMPLER: 'sometimes-secret' }, /^OTEL_TRACES_SAMPLER is not valid: expected one of always_on, /],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', AGENT_TRACE_CONTENT: 'yes-secret' }, /^AGENT_TRACE_CONTENT is not valid: expected true or false$/],
    ];
    for (const [env, line] of cases) {
      const error = (() => {
        try {
          tracingConfigFromEnv(env);
        } catch (caught) {
          return caught as Error;
        }
        throw new Error(`accepted ${Object.keys(env).join(', ')}`);
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toMatch(line);
      expect(error.message).not.toContain('secret');
    }
  });

  it('names every bad variable in the same line, as the other settings do', () => {
    expect(() => tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'nowhere-secret', AGENT_TRACE_CONTENT: 'yes-secret' })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT is not valid: expected an http:\/\/ or https:\/\/ URL; AGENT_TRACE_CONTENT is not valid: expected true or false$/,
    );
  });
});

describe('tracing off', () => {
  it('loads no OpenTelemetry SDK, exporter or Temporal interceptor into a worker or client process that has no endpoint', async () => {
    const probe = `
      import { createRequire } from 'node:module';
      import { createAgentWorker } from './worker/create-worker.ts';
      import { connectClient } from './client/sessions.ts';
      import { clientTracingOptions } from './tracing/tracing-client.ts';
      void createAgentWorker; void connectClient;
      const options = await clientTracingOptions({});
      // The API package is the no-op facade the activities call; everything behind it stays unloaded.
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter(
        (file) => (file.includes('/node_modules/@opentelemetry/') && !file.includes('/node_modules/@opentelemetry/api/')) || file.includes('interceptors-opentelemetry'),
      );
      console.log(JSON.stringify({ options, loaded }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ options: {}, loaded: [] });
  });
});
