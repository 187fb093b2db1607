import { Referral } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { z } from 'zod';
import { expectShape } from './upstream';

/** Referrals belong to the referral service; a sale reads them through its API. */
export async function findReferralById(client: ServiceClient, programId: string, referralId: string): Promise<Referral | null> {
  const response = await client.request({ method: 'GET', path: '/referrals', programId, query: { id: referralId } });
  if (response.status === 404) return null;
  return expectShape('referral', Referral, response);
}

export async function findReferralByEmail(client: ServiceClient, programId: string, email: string): Promise<Referral | null> {
  const response = await client.request({ method: 'GET', path: '/referrals', programId, query: { email, limit: '1' } });
  return expectShape('referral', z.array(Referral), response)[0] ?? null;
}
