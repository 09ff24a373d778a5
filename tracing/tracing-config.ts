import { z } from 'zod';
import { ConfigError } from '../config/config-error';
import { ENCRYPTION_KEY_ENV } from '../encryption/encryption-key';

/**
 * The standard OpenTelemetry variables this project reads, and nothing else: a collector
 * configured for any OTel SDK serves the agent as it is. Without an endpoint tracing is
 * off and no OpenTelemetry SDK code is even loaded.
 */
export interface TracingConfig {
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as given) or `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`). */
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  /** `AGENT_TRACE_CONTENT=true`: prompts and tool arguments go into spans too. */
  content: boolean;
  /**
   * Failed spans carry the failure's type, never its message (tracing/tracing-redaction.ts):
   * set when payloads are encrypted and content is not traced, since a message may quote
   * the conversation that history keeps encrypted.
   */
  redactFailures?: true;
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

const url = z.url({ protocol: /^https?$/ });

const TracingEnvSchema = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: url.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url.optional(),
  // The OTLP specification's default is http/protobuf; gRPC is not offered.
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS).optional(),
  AGENT_TRACE_CONTENT: z.enum(['true', 'false']).default('false'),
});

/** An empty variable counts as unset, as the OTel SDKs treat it. */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

/** `undefined` when no endpoint is set: tracing is off. Bad values are one line naming every such variable, never its value. */
export function tracingConfigFromEnv(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  const parsed = TracingEnvSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const variables = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? 'OTEL_*')))];
    throw new ConfigError(variables.map((variable) => `${variable} is not valid: ${describeExpected(variable)}`).join('; '));
  }
  const values = parsed.data;
  const endpoint = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (values.OTEL_EXPORTER_OTLP_ENDPOINT && `${values.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`);
  if (endpoint === undefined) return undefined;
  const content = values.AGENT_TRACE_CONTENT === 'true';
  // Whether the key itself is sound is encryption/'s to say; a process with a bad one does not start.
  const encrypted = (env[ENCRYPTION_KEY_ENV] ?? '') !== '';
  return {
    endpoint,
    protocol: values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? values.OTEL_EXPORTER_OTLP_PROTOCOL,
    content,
    ...(encrypted && !content ? { redactFailures: true as const } : {}),
  };
}

function describeExpected(variable: string): string {
  if (variable.endsWith('PROTOCOL')) return 'expected http/protobuf or http/json';
  if (variable === 'OTEL_TRACES_SAMPLER') return `expected one of ${SAMPLERS.join(', ')}`;
  if (variable === 'AGENT_TRACE_CONTENT') return 'expected true or false';
  return 'expected an http:// or https:// URL';
}
