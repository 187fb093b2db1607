import { CustomerClaimAnswer, Referral, type CreateReferralBody } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { z } from 'zod';
import { expectShape, upstreamMessage } from './upstream';

/** Referrals belong to the referral service; a sale reads them through its API. */
export async function findReferralById(client: ServiceClient, programId: string, referralId: string): Promise<Referral | null> {
  const response = await client.request({ method: 'GET', path: '/referrals', programId, query: { id: referralId } });
  if (response.status === 404) return null;
  return expectShape('referral', Referral, response);
}

/**
 * The first affiliate other than this one the referral service credited the customer to (by its
 * normalized email or its id in the program's system), from the referral service's own claims.
 */
export async function customerReferredByAnother(
  client: ServiceClient,
  programId: string,
  affiliateId: string,
  customer: { email?: string; customerId?: string },
) {
  const query = {
    affiliateId,
    ...(customer.email ? { email: customer.email } : {}),
    ...(customer.customerId ? { customerId: customer.customerId } : {}),
  };
  const response = await client.request({ method: 'GET', path: '/internal/customer-claims', programId, query });
  return expectShape('referral', CustomerClaimAnswer, response).claim;
}

export async function findReferralByEmail(client: ServiceClient, programId: string, email: string): Promise<Referral | null> {
  const response = await client.request({ method: 'GET', path: '/referrals', programId, query: { email, limit: '1' } });
  return expectShape('referral', z.array(Referral), response)[0] ?? null;
}

/**
 * A referral created for a customer the sale service learnt of itself (a Stripe checkout): null when
 * the referral service refuses it (an unknown click or visitor, an email already referred), with its reason.
 */
export async function createReferral(
  client: ServiceClient,
  programId: string,
  body: CreateReferralBody & { visitorId?: string },
): Promise<{ referral: Referral } | { refused: string }> {
  const response = await client.request({ method: 'POST', path: '/referrals', programId, body });
  if (response.status >= 400 && response.status < 500)
    return { refused: upstreamMessage(response.body) ?? `the referral service refused it (${response.status})` };
  return { referral: expectShape('referral', Referral, response) };
}
