import { createRequire } from 'node:module';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP collector received it, ids as hex, attribute values unwrapped. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** `undefined` for a root span. */
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
  /** 2 is ERROR in OTLP. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
}

export interface OtlpEndpoint {
  /** `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  readonly spans: readonly ReceivedSpan[];
  /** The content types of the export requests, in order (`application/json`, `application/x-protobuf`). */
  readonly contentTypes: readonly string[];
  /** Every export request as received (http/json) or decoded (http/protobuf), as JSON text: what a search for a secret must cover. */
  readonly exports: readonly string[];
  /** Requests to anything but `POST /v1/traces`: a misrouted exporter fails the test that checks this. */
  readonly misrouted: readonly string[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string | { toString(): string };
  doubleValue?: number;
  boolValue?: boolean;
  bytesValue?: string | number[];
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };
interface OtlpSpan {
  traceId: string | Uint8Array;
  spanId: string | Uint8Array;
  parentSpanId?: string | Uint8Array;
  name: string;
  attributes?: KeyValue[];
  status?: { code?: number };
  startTimeUnixNano: string | number | { toString(): string };
  endTimeUnixNano: string | number | { toString(): string };
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/**
 * A real OTLP/HTTP trace collector on 127.0.0.1: it accepts `POST /v1/traces` as the
 * specification defines it, decodes `http/json` bodies, and `http/protobuf` bodies with
 * the OTLP trace proto the exporters are generated from, and answers 200.
 */
export async function startOtlpEndpoint(): Promise<OtlpEndpoint> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const exports: string[] = [];
  const misrouted: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        misrouted.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      contentTypes.push(type);
      const request = type.startsWith('application/json') ? (JSON.parse(body.toString('utf8')) as ExportRequest) : decodeProtobuf(body);
      exports.push(JSON.stringify(request));
      spans.push(...flatten(request));
      res.writeHead(200, { 'content-type': type }).end(type.startsWith('application/json') ? '{}' : '');
    })().catch((error: unknown) => {
      misrouted.push(`undecodable export: ${(error as Error).message}`);
      res.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    exports,
    misrouted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function decodeProtobuf(body: Buffer): ExportRequest {
  // The exporters' own generated OTLP messages: the same .proto files a collector compiles.
  const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root');
  const type = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  return type.toObject(type.decode(body), { longs: String, bytes: Array }) as ExportRequest;
}

function flatten(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => {
        const parent = span.parentSpanId === undefined ? '' : hex(span.parentSpanId);
        return {
          service,
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: parent === '' ? undefined : parent,
          name: span.name,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          startNs: BigInt(String(span.startTimeUnixNano)),
          endNs: BigInt(String(span.endTimeUnixNano)),
        };
      }),
    );
  });
}

/** http/json carries ids as hex strings; protobuf as bytes. */
function hex(id: string | Uint8Array | number[]): string {
  return typeof id === 'string' ? id : Buffer.from(id).toString('hex');
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, unwrap(value)]));
}

function unwrap(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(String(value.intValue));
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.bytesValue !== undefined) return value.bytesValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(unwrap);
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values);
  // An empty AnyValue: the attribute was sent without a value.
  return null;
}
