import { AffiliateActivity, InternalAffiliate } from '@affiliate/contracts';
import { z } from 'zod';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape } from './upstream';

/** The affiliate service's own answer at the moment of the sale: status and commission rate are never a stale copy. */
export async function findAffiliate(
  client: ServiceClient,
  programId: string,
  affiliateId: string,
  options: { withRiskSettings?: boolean } = {},
): Promise<InternalAffiliate | null> {
  const query = options.withRiskSettings ? { id: affiliateId, risk: 'true' } : { id: affiliateId };
  const response = await client.request({ method: 'GET', path: '/internal/affiliates', programId, query });
  if (response.status === 404) return null;
  return expectShape('affiliate', InternalAffiliate, response);
}

/** Each affiliate of the program with its clicks and referrals in [from, to), for the report. */
export async function findAffiliateActivity(
  client: ServiceClient,
  programId: string,
  period: { from?: string; to?: string },
): Promise<AffiliateActivity[]> {
  const query = Object.fromEntries(Object.entries(period).filter(([, value]) => value !== undefined)) as Record<string, string>;
  const response = await client.request({ method: 'GET', path: '/internal/affiliate-activity', programId, query });
  return expectShape('affiliate', z.array(AffiliateActivity), response);
}
