import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { eventually } from '@affiliate/platform/testing';
import { Subscriber, System, type Api, type Delivery } from '../harness';

/**
 * Tracing across every hop (issue 26): gateway → service → service client → outbox → RabbitMQ →
 * consumer → webhook attempt, with the real processes as `npm start` runs them (each imports the
 * platform's telemetry first). One system runs without any OTEL_* variable (propagation only), one
 * exports to a small OTLP/HTTP receiver of this file's own.
 */
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

type Attempt = { traceId?: string | null };

/** An affiliate with a promotional code, and an endpoint subscribed to sale.created. */
async function programWithCode(system: System, hooks: string): Promise<{ api: Api; code: string }> {
  const { api } = await system.createProgram();
  const tag = randomUUID().slice(0, 8);
  const affiliate = await api.post('/affiliates', {
    firstName: 'Ada',
    lastName: 'Byron',
    email: `ada-${tag}@example.com`,
    affiliateLink: `ada-${tag}`,
  });
  const coupon = await api.post('/coupons', { name: `Spring ${tag}`, percentOff: 20 });
  const code = `SPRING${tag}`.toUpperCase();
  const promotionalCode = await api.post('/promotional-codes', { couponId: coupon.body.id, code, affiliateId: affiliate.body.id });
  const endpoint = await api.post('/webhook-endpoints', { url: hooks, eventTypes: ['sale.created'] });
  expect([affiliate.status, coupon.status, promotionalCode.status, endpoint.status]).toEqual([200, 200, 200, 200]);
  return { api, code };
}

async function saleByCode(api: Api, code: string, headers: Record<string, string> = {}): Promise<string> {
  const sale = await api.post('/sales', { promoCode: code, totalEarned: 100, externalId: `pay_${randomUUID()}` }, headers);
  expect(sale.status).toBe(200);
  return sale.body.id as string;
}

/** The sale.created webhook of this sale, once the subscriber has it. */
const deliveryOf = (subscriber: Subscriber, saleId: string) =>
  eventually(
    () => {
      const delivery = subscriber.events('sale.created').find((received) => received.body.data.id === saleId);
      expect(delivery).toBeDefined();
      return delivery as Delivery;
    },
    60_000,
    200,
  );

/** The attempts the delivery log shows for the event this webhook carried. */
async function attemptsOf(api: Api, delivery: Delivery): Promise<Attempt[]> {
  const log = await api.get(`/webhook-deliveries?eventId=${delivery.body.id}`);
  expect(log.status).toBe(200);
  expect(log.body).toHaveLength(1);
  return log.body[0].attempts as Attempt[];
}

describe('without an exporter', () => {
  let system: System;
  const subscriber = new Subscriber();
  let hooks: string;

  beforeAll(async () => {
    system = await System.start({ LOG_LEVEL: 'info' });
    hooks = await subscriber.start();
  }, 180_000);
  afterAll(async () => {
    await subscriber.stop();
    await system?.stop();
  });

  test("a request's traceparent reaches its webhook and the attempt on the delivery record when nothing exports spans", async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    const saleId = await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-01` });

    const delivery = await deliveryOf(subscriber, saleId);
    // The subscriber receives the attempt's own span as the parent: same trace, the caller's flags.
    expect(String(delivery.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect((await attemptsOf(api, delivery)).map((attempt) => attempt.traceId)).toEqual([traceId]);
  }, 120_000);

  test("a request's unsampled traceparent is continued too when nothing exports: its webhook carries the trace with the caller's flags", async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    const saleId = await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-00` });

    const delivery = await deliveryOf(subscriber, saleId);
    expect(String(delivery.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    expect((await attemptsOf(api, delivery)).map((attempt) => attempt.traceId)).toEqual([traceId]);
  }, 120_000);

  test('a request without a traceparent starts no trace when nothing exports: its webhook carries none and its attempt shows none', async () => {
    const { api, code } = await programWithCode(system, hooks);
    const saleId = await saleByCode(api, code);

    const delivery = await deliveryOf(subscriber, saleId);
    expect(delivery.headers.traceparent).toBeUndefined();
    expect((await attemptsOf(api, delivery)).map((attempt) => attempt.traceId)).toEqual([null]);
  }, 120_000);

  test('log lines carry the trace_id and span_id of the request they were written in, in every component it crossed', async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    const saleId = await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-01` });
    await deliveryOf(subscriber, saleId);

    const linesOf = (component: 'gateway' | 'sale' | 'coupon') =>
      system
        .logOf(component)
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { trace_id?: string; span_id?: string })
        .filter((line) => line.trace_id === traceId);
    await eventually(
      () => {
        for (const component of ['gateway', 'sale', 'coupon'] as const) {
          const lines = linesOf(component);
          expect({ component, lines: lines.length > 0 }).toEqual({ component, lines: true });
          for (const line of lines) expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
        }
      },
      10_000,
      200,
    );
  }, 120_000);

  test("the dispatcher's log lines about a delivery carry the trace_id of the request that caused it", async () => {
    const gone = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(410).end());
    });
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    try {
      const { api } = await system.createProgram();
      const endpoint = await api.post('/webhook-endpoints', {
        url: `http://127.0.0.1:${(gone.address() as AddressInfo).port}/hooks`,
        eventTypes: ['affiliate.created'],
      });
      expect(endpoint.status).toBe(200);
      const traceId = hex(16);
      const affiliate = await api.post(
        '/affiliates',
        { firstName: 'Ada', lastName: 'Byron', email: `ada-${hex(4)}@example.com` },
        { traceparent: `00-${traceId}-${hex(8)}-01` },
      );
      expect(affiliate.status).toBe(200);
      // The subscriber answers 410 Gone: the dispatcher disables the endpoint and says so, in the attempt's trace.
      await eventually(
        () => {
          const lines = system
            .logOf('webhook-dispatcher')
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as { msg?: string; trace_id?: string; span_id?: string })
            .filter((line) => line.msg === 'webhook endpoint disabled' && line.trace_id === traceId);
          expect(lines).toHaveLength(1);
          expect(lines[0]?.span_id).toMatch(/^[0-9a-f]{16}$/);
        },
        60_000,
        200,
      );
    } finally {
      await new Promise<void>((resolve) => gone.close(() => resolve()));
    }
  }, 120_000);

  test("a webhook's retries continue the trace of the request that caused it, each attempt showing it", async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    subscriber.failing = true;
    let saleId: string;
    try {
      saleId = await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-01` });
      // Retries come from the schedule, which reads the delivery back: its stored trace, not memory.
      await eventually(
        async () => {
          const log = await api.get('/webhook-deliveries?eventType=sale.created&status=pending');
          const failed = (log.body as { attempts: (Attempt & { statusCode: number | null })[] }[])
            .flatMap((delivery) => delivery.attempts)
            .filter((attempt) => attempt.traceId === traceId && attempt.statusCode === 503);
          expect(failed.length).toBeGreaterThanOrEqual(2);
        },
        60_000,
        200,
      );
    } finally {
      subscriber.failing = false;
    }
    const delivery = await deliveryOf(subscriber, saleId);
    const attempts = await attemptsOf(api, delivery);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(attempts.map((attempt) => attempt.traceId))).toEqual(new Set([traceId]));
  }, 120_000);

  test('an event relayed only after its service was killed and restarted continues the trace of the request that caused it', async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    // The broker away: the sale's event can only wait in the outbox, stored with the request's trace.
    await system.rabbit.stop();
    let saleId: string;
    try {
      saleId = await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-01` });
      await system.kill('sale', 'SIGKILL');
    } finally {
      await system.rabbit.start();
    }
    // A new process, with nothing of the request in memory, relays it from the outbox.
    await system.launch('sale');
    await system.waitReady('sale');

    const delivery = await deliveryOf(subscriber, saleId);
    expect(String(delivery.headers.traceparent)).toContain(`-${traceId}-`);
    expect((await attemptsOf(api, delivery)).map((attempt) => attempt.traceId)).toEqual([traceId]);
  }, 180_000);
});

/** `scope`: the instrumentation that made the span (its package name). */
type ExportedSpan = { service: string; scope: string; traceId: string; spanId: string; parentSpanId: string; name: string; kind: number };
const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

/** An OTLP/HTTP trace receiver (JSON encoding), keeping every span it is sent. */
class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = JSON.parse((request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')) as OtlpTraces;
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service =
            resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              this.spans.push({
                service,
                scope: scope.scope?.name ?? '',
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
              });
            }
          }
        }
        response.setHeader('content-type', 'application/json');
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
type OtlpTraces = {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number }[];
    }[];
  }[];
};

describe('with an OTLP/HTTP exporter', () => {
  let system: System;
  const subscriber = new Subscriber();
  const receiver = new OtlpReceiver();
  let hooks: string;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    // The standard variables only; JSON so that this receiver needs no protobuf decoder.
    system = await System.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    hooks = await subscriber.start();
  }, 180_000);
  afterAll(async () => {
    await subscriber.stop();
    await system?.stop();
    await receiver.stop();
  });

  test("the gateway's part of a trace is its server span and the proxied call, with no span per express middleware or route", async () => {
    const { api, code } = await programWithCode(system, hooks);
    const traceId = hex(16);
    await saleByCode(api, code, { traceparent: `00-${traceId}-${hex(8)}-01` });

    const gateway = await eventually(
      () => {
        const spans = receiver.spans.filter((span) => span.traceId === traceId && span.service === 'gateway');
        const http = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-http');
        expect(http.map((span) => span.kind).sort()).toEqual([SPAN_KIND.SERVER, SPAN_KIND.CLIENT].sort());
        return spans;
      },
      30_000,
      200,
    );
    expect(gateway.filter((span) => span.scope === '@opentelemetry/instrumentation-express')).toEqual([]);
  }, 60_000);

  test('one POST /sales by promotional code is one trace across gateway, sale, coupon, the relay, the dispatcher and the signed delivery, every parent in it', async () => {
    const { api, code } = await programWithCode(system, hooks);
    const saleId = await saleByCode(api, code);
    const delivery = await deliveryOf(subscriber, saleId);
    const [attempt] = await attemptsOf(api, delivery);
    const traceId = attempt?.traceId as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // The span the subscriber was told is its parent: the dispatcher's POST.
    const [, sentTraceId, sentSpanId] = TRACEPARENT.exec(String(delivery.headers.traceparent)) ?? [];
    expect(sentTraceId).toBe(traceId);

    const spans = await eventually(
      () => {
        const trace = receiver.spans.filter((span) => span.traceId === traceId);
        const has = (service: string, kind: number, name?: RegExp) =>
          trace.some((span) => span.service === service && span.kind === kind && (!name || name.test(span.name)));
        expect({
          gateway: has('gateway', SPAN_KIND.SERVER),
          sale: has('sale', SPAN_KIND.SERVER),
          saleCallsCoupon: has('sale', SPAN_KIND.CLIENT),
          coupon: has('coupon', SPAN_KIND.SERVER),
          relayPublish: has('sale', SPAN_KIND.PRODUCER, /^publish /),
          dispatcherConsume: has('webhook-dispatcher', SPAN_KIND.CONSUMER, /^process /),
          attempt: has('webhook-dispatcher', SPAN_KIND.INTERNAL, /^webhook attempt$/),
          signedDelivery: trace.some(
            (span) => span.service === 'webhook-dispatcher' && span.kind === SPAN_KIND.CLIENT && span.spanId === sentSpanId,
          ),
          // The express and mongodb instrumentations at work in the sale service: its route handler, its database writes.
          saleExpress: trace.some(
            (span) =>
              span.service === 'sale' &&
              span.scope === '@opentelemetry/instrumentation-express' &&
              /^(request handler|middleware|router) - /.test(span.name),
          ),
          saleMongodb: trace.some(
            (span) => span.service === 'sale' && span.scope === '@opentelemetry/instrumentation-mongodb' && span.kind === SPAN_KIND.CLIENT,
          ),
        }).toEqual({
          gateway: true,
          sale: true,
          saleCallsCoupon: true,
          coupon: true,
          relayPublish: true,
          dispatcherConsume: true,
          attempt: true,
          signedDelivery: true,
          saleExpress: true,
          saleMongodb: true,
        });
        // Every parent is a span of the trace (exported by now), but the root's.
        const ids = new Set(trace.map((span) => span.spanId));
        expect(trace.filter((span) => span.parentSpanId && !ids.has(span.parentSpanId))).toEqual([]);
        return trace;
      },
      30_000,
      200,
    );

    const roots = spans.filter((span) => !span.parentSpanId);
    expect(roots.map((span) => [span.service, span.kind])).toEqual([['gateway', SPAN_KIND.SERVER]]);
    // The chain itself: the signed POST under the attempt, under the consume, under the relay's publish.
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const ancestry: string[] = [];
    for (let span = byId.get(sentSpanId as string); span; span = byId.get(span.parentSpanId)) ancestry.push(`${span.service} ${span.kind}`);
    expect(ancestry).toEqual(
      expect.arrayContaining([
        `webhook-dispatcher ${SPAN_KIND.CLIENT}`,
        `webhook-dispatcher ${SPAN_KIND.INTERNAL}`,
        `webhook-dispatcher ${SPAN_KIND.CONSUMER}`,
        `sale ${SPAN_KIND.PRODUCER}`,
        `sale ${SPAN_KIND.SERVER}`,
        `gateway ${SPAN_KIND.SERVER}`,
      ]),
    );
  }, 120_000);
});
