import { badRequest, notFound } from '@affiliate/platform';
import type { DispatcherSettings } from '../config';
import type { Repositories } from '../data-access/repositories';
import { withJitter } from './retry-schedule';

/**
 * POST /webhook-deliveries/recover: every failed delivery of the endpoint created in the window goes
 * back on the retry schedule from its start, e.g. after the subscriber was down for a while.
 */
export async function recoverDeliveries(
  repositories: Repositories,
  settings: DispatcherSettings,
  programId: string,
  request: { webhookEndpointId: string; since: string; until?: string },
): Promise<{ recovered: number }> {
  const since = new Date(request.since);
  const until = request.until === undefined ? new Date() : new Date(request.until);
  if (since > until) throw badRequest('since must not be after until', 'parameter_invalid', 'since');
  const endpoint = await repositories.endpoints.byId(programId, request.webhookEndpointId);
  if (!endpoint) throw notFound(`No webhook endpoint with id ${request.webhookEndpointId}`);
  if (!endpoint.active)
    throw badRequest(
      'The endpoint is disabled: enable it (PUT /webhook-endpoints with active: true) first',
      'webhook_endpoint_unavailable',
    );

  // A manual operation over the endpoint's history: it may read the log; each recovered delivery
  // then goes back on the schedule, where the senders find it.
  const failed = await repositories.deliveries.failedOf(programId, request.webhookEndpointId, since, until);
  let recovered = 0;
  for (const delivery of failed) {
    const dueAt = new Date(Date.now() + withJitter(settings.retryScheduleMs[0] ?? 0));
    if (!(await repositories.deliveries.retryFailed(programId, delivery._id, dueAt))) continue;
    await repositories.schedule.schedule(delivery, dueAt);
    recovered += 1;
  }
  return { recovered };
}
