import type { RunningService } from '@affiliate/platform';
import { eventually, newProgramId } from '@affiliate/platform/testing';
import { bootDispatcher, createEndpoint, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber } from './support/subscriber';

/**
 * Issue 26, domain metrics of the dispatcher: attempts an open circuit holds back, and endpoints
 * disabled for failing, are counted on the dispatcher's metrics under their own labels.
 */
const sample = (text: string, name: string, labels: string) =>
  Number(new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
const metricOf = async (service: RunningService, name: string, labels: string) =>
  sample(await service.context.metrics.registry.metrics(), name, labels);

async function withDispatcher(
  settings: Parameters<typeof testDispatcherSettings>[0],
  run: (service: RunningService, publisher: ReturnType<typeof eventPublisher>, url: string) => Promise<void>,
) {
  const service = await bootDispatcher(testDispatcherSettings(settings));
  const publisher = eventPublisher(service);
  const failing = await startSubscriber(() => ({ status: 500 }));
  try {
    await run(service, publisher, failing.url);
  } finally {
    await publisher.close();
    await service.stop();
    await failing.close();
  }
}

test('an attempt held back by the open circuit of its endpoint counts as circuit_open', async () => {
  const breaker = { errorThresholdPercentage: 50, volumeThreshold: 3, resetTimeoutMs: 60_000 };
  await withDispatcher({ retryScheduleMs: [0, 50, 50, 50, 50], breaker }, async (service, publisher, url) => {
    const programId = newProgramId();
    await createEndpoint(service, programId, { url, eventTypes: ['promocode.deleted'] });
    expect(await metricOf(service, 'webhook_attempts_total', 'outcome="circuit_open"')).toBe(0);
    await publisher.publish('promocode.deleted', programId);
    // Three failures open the circuit; the fourth attempt is held back without being sent.
    await eventually(async () => expect(await metricOf(service, 'webhook_attempts_total', 'outcome="circuit_open"')).toBe(1), 30_000);
    expect(await metricOf(service, 'webhook_attempts_total', 'outcome="failed"')).toBe(3);
  });
});

test('an endpoint disabled because every delivery failed for the set time counts as disabled (failing)', async () => {
  await withDispatcher({ retryScheduleMs: [0, 50, 50, 50], disableAfterMs: 1 }, async (service, publisher, url) => {
    const programId = newProgramId();
    await createEndpoint(service, programId, { url, eventTypes: ['promocode.deleted'] });
    await publisher.publish('promocode.deleted', programId);
    await eventually(async () => expect(await metricOf(service, 'webhook_endpoints_disabled_total', 'reason="failing"')).toBe(1), 30_000);
    expect(await metricOf(service, 'webhook_endpoints_disabled_total', 'reason="gone"')).toBe(0);
  });
});
