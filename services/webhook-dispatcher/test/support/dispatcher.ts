import { exampleEventData, type EventEnvelope, type EventType } from '@affiliate/contracts';
import { bootService, createEvent, createLogger, EventBus, type RunningService, type ServiceSettings } from '@affiliate/platform';
import { eventually, internalHeaders, testServiceSettings } from '@affiliate/platform/testing';
import request from 'supertest';
import { DEFAULT_DISPATCHER_SETTINGS, type DispatcherSettings } from '../../src/config';
import { buildWebhookDispatcherService } from '../../src/service';

/**
 * Short schedule and fast polling; subscribers run on localhost, so private URLs are allowed, and
 * their answers are shown as a public subscriber's would be (the withholding has its own test).
 */
export function testDispatcherSettings(overrides: Partial<DispatcherSettings> = {}): DispatcherSettings {
  return {
    ...DEFAULT_DISPATCHER_SETTINGS,
    allowPrivateUrls: true,
    showPrivateResponses: true,
    retryScheduleMs: [0, 200, 200],
    pollIntervalMs: 100,
    timeoutMs: 5000,
    ...overrides,
  };
}

export function bootDispatcher(
  settings = testDispatcherSettings(),
  serviceSettings: ServiceSettings = testServiceSettings('webhook-dispatcher'),
): Promise<RunningService> {
  return bootService(serviceSettings, (context) => buildWebhookDispatcherService(context, settings));
}

/** Publishes domain events on the service's exchange, as the other services do. */
export function eventPublisher(service: RunningService) {
  const bus = new EventBus({
    url: service.context.settings.amqpUrl,
    exchange: service.context.settings.exchange,
    logger: createLogger('test-publisher', 'silent'),
  });
  return {
    /** Valid data of the type (the catalogue's example) with a fresh id and these fields replaced. */
    async publish(type: EventType, programId: string, replaced: Record<string, unknown> = {}) {
      const event = createEvent(type, programId, exampleEventData(type, { id: crypto.randomUUID(), ...replaced } as never));
      await bus.publish(event);
      return event;
    },
    /** The same event once more, as the broker redelivers one whose acknowledgement was lost. */
    publishAgain: (event: EventEnvelope) => bus.publish(event),
    close: () => bus.close(),
  };
}

export async function createEndpoint(
  service: RunningService,
  programId: string,
  body: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  const response = await request(service.server).post('/webhook-endpoints').set(internalHeaders(programId)).send(body);
  if (response.status !== 200) throw new Error(`endpoint not created: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; secret: string };
}

export async function deliveriesOf(service: RunningService, programId: string, query: Record<string, string>) {
  const response = await request(service.server).get('/webhook-deliveries').query(query).set(internalHeaders(programId)).expect(200);
  return response.body as {
    id: string;
    status: string;
    attempts: {
      statusCode: number | null;
      error: string | null;
      at: string;
      latencyMs: number;
      responseExcerpt: string | null;
      responseBytes: number | null;
    }[];
    nextAttemptAt: string | null;
  }[];
}

/**
 * Waits until the delivery of an event to an endpoint has the given status. The query must name one
 * delivery: one that matches two (an event fanned out to another endpoint of the program) would let
 * the list's order decide which of them is looked at.
 */
export function deliveryReaching(service: RunningService, programId: string, query: Record<string, string>, status: string) {
  return eventually(async () => {
    const deliveries = await deliveriesOf(service, programId, query);
    expect(deliveries.length).toBeLessThanOrEqual(1);
    const [delivery] = deliveries;
    expect(delivery?.status).toBe(status);
    return delivery as NonNullable<typeof delivery>;
  });
}

/**
 * Events the dispatcher took off the bus and acknowledged, whatever became of them (its consumer's
 * own count): a test publishes, then waits for this to grow to know the event was handled.
 */
export async function eventsAcknowledged(service: RunningService): Promise<number> {
  const text = await service.context.metrics.registry.metrics();
  return [...text.matchAll(/^events_consumed_total\{[^}]*\} (\S+)$/gm)].reduce((sum, [, value]) => sum + Number(value), 0);
}
