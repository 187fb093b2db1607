import { AffiliateActivity, InternalAffiliate } from '@affiliate/contracts';
import { z } from 'zod';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape } from './upstream';

/**
 * The affiliate service's own answer, never a copy kept here. `forSale`: a sale being recorded (every
 * sale asks), answered from what the affiliate process read within its RECENT_READS_MS (2 s): a change
 * made on another affiliate replica (status, plan, tier, default plan, risk settings) may reach the
 * sales a moment later. Without it (a payout's payee and IBAN), the affiliate as stored now.
 */
export async function findAffiliate(
  client: ServiceClient,
  programId: string,
  affiliateId: string,
  options: { withRiskSettings?: boolean; forSale?: boolean } = {},
): Promise<InternalAffiliate | null> {
  const query = {
    id: affiliateId,
    ...(options.withRiskSettings ? { risk: 'true' } : {}),
    ...(options.forSale ? { recent: 'true' } : {}),
  };
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
