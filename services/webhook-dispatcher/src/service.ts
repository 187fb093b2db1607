import { BacklogNewsPublisher, createWebhookMetrics, type ServiceContext, type ServiceParts } from '@affiliate/platform';
import { DEFAULT_DISPATCHER_SETTINGS, type DispatcherSettings } from './config';
import { createRepositories } from './data-access/repositories';
import { createSubscriberClient } from './data-access/subscriber-client';
import type { Dispatcher } from './domain/attempt-delivery';
import { findBacklog } from './domain/claim-delivery';
import { EndpointCircuits } from './domain/endpoint-circuits';
import { webhookRoutes } from './entry-points/api/routes';
import { FAN_OUT_QUEUE, subscribeToEvents } from './entry-points/messaging/subscriptions';
import { DeliveryScheduler } from './entry-points/scheduler/delivery-scheduler';
import { EventStoreTasks } from './entry-points/scheduler/event-store-tasks';

/** Webhook endpoints, the event fan-out into deliveries, and the scheduler that sends them. */
export function buildWebhookDispatcherService(
  context: ServiceContext,
  settings: DispatcherSettings = DEFAULT_DISPATCHER_SETTINGS,
): ServiceParts {
  const repositories = createRepositories(context, settings.secretEncryptionKey);
  const client = createSubscriberClient({
    timeoutMs: settings.timeoutMs,
    allowPrivateUrls: settings.allowPrivateUrls,
    showPrivateResponses: settings.showPrivateResponses,
    socketsPerOrigin: settings.socketsPerOrigin,
  });
  const circuits = new EndpointCircuits(client, settings.breaker, context.logger, context.metrics.circuits);
  const metrics = createWebhookMetrics(context.metrics.registry);
  const dispatcher: Dispatcher = { repositories, settings, logger: context.logger, client, circuits, metrics };
  const scheduler = new DeliveryScheduler(dispatcher);
  const eventTasks = new EventStoreTasks(repositories, settings, context.logger, () => scheduler.nudge());
  metrics.watchBacklog(() => findBacklog(repositories));
  // What this process holds per program and has not attempted yet: events in its fan-out window,
  // deliveries waiting for a turn. The services refuse a program's event-creating writes past a bound.
  const backlogNews = new BacklogNewsPublisher(
    context.bus,
    context.settings.exchange,
    () => {
      const held: Record<string, number> = {};
      for (const [programId, count] of context.bus.heldPerProgram(FAN_OUT_QUEUE)) held[programId] = count;
      for (const [programId, count] of scheduler.waitingPerProgram()) held[programId] = (held[programId] ?? 0) + count;
      return held;
    },
    context.logger,
  );
  return {
    routes: webhookRoutes(dispatcher, scheduler),
    // Its writes (endpoints, re-sends) create no events: never refused for a backlog.
    writesWithoutEvents: 'every',
    subscribe: async () => {
      const sealed = await repositories.endpoints.sealPlaintextSecretsAcrossPrograms();
      if (sealed > 0) context.logger.info({ sealed }, 'encrypted webhook signing secrets stored before encryption at rest');
      // Started first: the first events consumed push their deliveries to it.
      scheduler.start();
      eventTasks.start();
      await subscribeToEvents(context, repositories, settings, scheduler);
      backlogNews.start();
    },
    close: async () => {
      await backlogNews.stop();
      await eventTasks.stop();
      await scheduler.stop();
    },
  };
}
