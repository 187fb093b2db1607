import type { Logger } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';

/** Disables an endpoint and ends its pending deliveries: a disabled endpoint receives nothing further. True when this call disabled it. */
export async function disableEndpoint(
  repositories: Repositories,
  programId: string,
  endpointId: string,
  reason: string,
  logger: Logger,
): Promise<boolean> {
  const disabled = await repositories.endpoints.disable(programId, endpointId, reason);
  if (disabled) logger.warn({ endpointId, reason }, 'webhook endpoint disabled');
  await failPendingDeliveries(repositories, programId, endpointId);
  return disabled;
}

/** Pending deliveries of an endpoint that nobody is sending fail: it receives nothing further. */
export async function failPendingDeliveries(repositories: Repositories, programId: string, endpointId: string): Promise<void> {
  await repositories.deliveries.failPendingOf(programId, endpointId);
}

export async function recordEndpointSuccess(repositories: Repositories, programId: string, endpointId: string): Promise<void> {
  await repositories.endpoints.markHealthy(programId, endpointId);
}

/** A failure starts the endpoint's run of failures; a run as long as the setting disables it (true when this failure did). */
export async function recordEndpointFailure(
  repositories: Repositories,
  settings: DispatcherSettings,
  logger: Logger,
  programId: string,
  endpointId: string,
  at: Date,
): Promise<boolean> {
  const endpoint = await repositories.endpoints.markFailing(programId, endpointId, at);
  if (!endpoint?.active || !endpoint.failingSince) return false;
  if (at.getTime() - endpoint.failingSince.getTime() < settings.disableAfterMs) return false;
  const reason = `every delivery failed since ${endpoint.failingSince.toISOString()}`;
  return disableEndpoint(repositories, programId, endpointId, reason, logger);
}
