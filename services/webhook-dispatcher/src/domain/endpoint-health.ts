import type { Logger } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Models } from '../data-access/models';

/** Disables an endpoint and ends its pending deliveries: a disabled endpoint receives nothing further. */
export async function disableEndpoint(models: Models, endpointId: string, reason: string, logger: Logger): Promise<void> {
  const now = new Date();
  const changed = await models.endpoints.updateOne(
    { _id: endpointId, active: true },
    { $set: { active: false, disabledReason: reason, updatedAt: now } },
  );
  if (changed.modifiedCount === 1) logger.warn({ endpointId, reason }, 'webhook endpoint disabled');
  await failPendingDeliveries(models, endpointId);
}

/** Pending deliveries of an endpoint that will not be sent: failed, so that a recovery can re-send them. */
export async function failPendingDeliveries(models: Models, endpointId: string): Promise<void> {
  await models.deliveries.updateMany(
    { endpointId, status: 'pending', lockedUntil: { $lte: new Date() } },
    { $set: { status: 'failed', nextAttemptAt: null, updatedAt: new Date() } },
  );
}

export async function recordEndpointSuccess(models: Models, endpointId: string): Promise<void> {
  await models.endpoints.updateOne({ _id: endpointId, failingSince: { $ne: null } }, { $set: { failingSince: null } });
}

/** Starts or continues the endpoint's run of failures; a run longer than the bound disables it. */
export async function recordEndpointFailure(
  models: Models,
  settings: DispatcherSettings,
  logger: Logger,
  endpointId: string,
  at: Date,
): Promise<void> {
  await models.endpoints.updateOne({ _id: endpointId, failingSince: null }, { $set: { failingSince: at } });
  const endpoint = await models.endpoints.findOne({ _id: endpointId }).select('failingSince active').lean();
  if (!endpoint?.active || !endpoint.failingSince) return;
  if (at.getTime() - endpoint.failingSince.getTime() >= settings.disableAfterMs) {
    const reason = `every delivery failed since ${endpoint.failingSince.toISOString()}`;
    await disableEndpoint(models, endpointId, reason, logger);
  }
}
