import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as the bench needs it: times in milliseconds since the epoch. */
export type CollectedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  service: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
};

export const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 } as const;

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type OtlpAttribute = { key: string; value?: OtlpValue };
type OtlpTime = string | number | { low: number; high: number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: OtlpTime;
  endTimeUnixNano: OtlpTime;
  attributes?: OtlpAttribute[];
};
type OtlpRequest = {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
};

/** Nanoseconds since the epoch (a decimal string, a number, or protobuf.js's long bits) as milliseconds. */
function milliseconds(time: OtlpTime): number {
  if (typeof time === 'object') return (time.high * 2 ** 32 + (time.low >>> 0)) / 1e6;
  return Number(BigInt(time) / 1000n) / 1000;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (!value) continue;
    const plain =
      value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue === undefined ? undefined : Number(value.intValue));
    if (plain !== undefined) result[key] = plain;
  }
  return result;
}

/**
 * A minimal OTLP/HTTP JSON receiver (`POST /v1/traces`) in the bench process. The components export
 * to it (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json) with the parent-based sampler and no root
 * sampling, so only the requests the bench sends with a sampled `traceparent` record spans: the other
 * scenarios run as untraced as without it. Spans of traces the bench did not ask about are dropped.
 */
export class TraceCollector {
  private server: Server | undefined;
  private readonly wanted = new Set<string>();
  private readonly spans = new Map<string, CollectedSpan[]>();
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          const raw = Buffer.concat(chunks);
          const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          this.take(JSON.parse(body.toString('utf8')) as OtlpRequest);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  /** The components' settings: export to this receiver, record only what arrives with a sampled traceparent. */
  environment(): Record<string, string> {
    return {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: this.url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
      // Export every second, with room for a burst: a dropped span would leave a hop unknown.
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '65536',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096',
    };
  }

  /** A new sampled trace whose spans are kept; its `traceparent` goes on the request. */
  newTrace(): { traceId: string; traceparent: string } {
    const traceId = randomBytes(16).toString('hex');
    this.wanted.add(traceId);
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  }

  spansOf(traceId: string): CollectedSpan[] {
    return this.spans.get(traceId) ?? [];
  }

  /** Forgets the traces asked about so far (a step's breakdown is computed, the next starts afresh). */
  clear(): void {
    this.wanted.clear();
    this.spans.clear();
  }

  private take(request: OtlpRequest): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? 'unknown');
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          const traceId = span.traceId.toLowerCase();
          if (!this.wanted.has(traceId)) continue;
          const list = this.spans.get(traceId) ?? [];
          list.push({
            traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind ?? 0,
            service,
            startMs: milliseconds(span.startTimeUnixNano),
            endMs: milliseconds(span.endTimeUnixNano),
            attributes: attributesOf(span.attributes),
          });
          this.spans.set(traceId, list);
        }
      }
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
