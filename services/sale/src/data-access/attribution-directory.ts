import { ExplainedAttribution } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape, upstreamMessage } from './upstream';

/**
 * A click or a visitor's clicks, resolved by the affiliate service (the owner of clicks and of the
 * program's attribution window and model) at the moment of the sale. A refusal (no such click, a
 * visitor without clicks, a click past the window) comes back with the affiliate service's reason.
 */
export async function resolveVisit(
  client: ServiceClient,
  programId: string,
  visit: { clickId: number } | { visitorId: string },
): Promise<ExplainedAttribution | { refused: string }> {
  const query = 'clickId' in visit ? { clickId: String(visit.clickId) } : { visitorId: visit.visitorId };
  const response = await client.request({ method: 'GET', path: '/internal/attribution', programId, query });
  if (response.status === 404 || response.status === 400) {
    const value = 'clickId' in visit ? String(visit.clickId) : visit.visitorId;
    return { refused: upstreamMessage(response.body) ?? `${value} does not resolve to an affiliate in this program` };
  }
  return expectShape('affiliate', ExplainedAttribution, response);
}
