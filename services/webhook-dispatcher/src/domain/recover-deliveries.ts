import { badRequest, notFound } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Models } from '../data-access/models';
import { withJitter } from './retry-schedule';

/**
 * POST /webhook-deliveries/recover: every failed delivery of the endpoint created in the window goes
 * back on the retry schedule from its start, e.g. after the subscriber was down for a while.
 */
export async function recoverDeliveries(
  models: Models,
  settings: DispatcherSettings,
  programId: string,
  request: { webhookEndpointId: string; since: string; until?: string },
): Promise<{ recovered: number }> {
  const since = new Date(request.since);
  const until = request.until === undefined ? new Date() : new Date(request.until);
  if (since > until) throw badRequest('since must not be after until');
  const endpoint = await models.endpoints.findOne({ _id: request.webhookEndpointId, programId }).select('active').lean();
  if (!endpoint) throw notFound(`No webhook endpoint with id ${request.webhookEndpointId}`);
  if (!endpoint.active) throw badRequest('The endpoint is disabled: enable it (PUT /webhook-endpoints with active: true) first');

  const result = await models.deliveries.updateMany(
    { programId, endpointId: request.webhookEndpointId, status: 'failed', createdAt: { $gte: since, $lte: until } },
    { $set: { status: 'pending', scheduledAttempts: 0, nextAttemptAt: new Date(Date.now() + withJitter(settings.retryScheduleMs[0] ?? 0)), updatedAt: new Date() } },
  );
  return { recovered: result.modifiedCount };
}
