import { InternalAffiliate } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape } from './upstream';

/** The affiliate service's own answer at the moment of the sale: status and commission rate are never a stale copy. */
export async function findAffiliate(client: ServiceClient, programId: string, affiliateId: string): Promise<InternalAffiliate | null> {
  const response = await client.request({ method: 'GET', path: '/internal/affiliates', programId, query: { id: affiliateId } });
  if (response.status === 404) return null;
  return expectShape('affiliate', InternalAffiliate, response);
}
