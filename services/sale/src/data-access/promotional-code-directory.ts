import { PromotionalCode } from '@affiliate/contracts';
import type { ServiceClient } from '@affiliate/platform';
import { expectShape } from './upstream';

/** The program's promotional code whose externalId is this (a billing provider's id of the code), or null. */
export async function findPromotionalCodeByExternalId(
  client: ServiceClient,
  programId: string,
  externalId: string,
): Promise<PromotionalCode | null> {
  const response = await client.request({ method: 'GET', path: '/promotional-codes', programId, query: { externalId } });
  if (response.status === 404) return null;
  return expectShape('coupon', PromotionalCode, response);
}
