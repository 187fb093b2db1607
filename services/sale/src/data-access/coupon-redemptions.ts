import { Redemption, type RedeemPromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, type ServiceClient } from '@affiliate/platform';
import { expectShape, upstreamMessage } from './upstream';

/** The coupon service is counting the same key for a concurrent request right now. */
export class RedemptionInProgress extends Error {}

/**
 * Asks the coupon service to redeem a code for one sale. Every refusal (unknown, inactive, expired,
 * unassigned code; invalid or expired coupon; a limit reached; the code's own restrictions) comes
 * back as a 400 carrying the coupon service's reason.
 */
export async function redeemCode(client: ServiceClient, programId: string, body: RedeemPromotionalCodeBody): Promise<Redemption> {
  const response = await client.request({ method: 'POST', path: '/internal/redemptions', programId, body });
  if (response.status === 409) throw new RedemptionInProgress(upstreamMessage(response.body));
  if (response.status >= 400 && response.status < 500) {
    throw badRequest(
      upstreamMessage(response.body) ?? `Promotional code ${body.code} cannot be redeemed`,
      'promotional_code_not_redeemable',
      'code',
    );
  }
  return expectShape('coupon', Redemption, response);
}

/** Gives a counted redemption back; true once the coupon service has settled it (a repeat is harmless). */
export async function releaseRedemption(client: ServiceClient, programId: string, redemptionKey: string): Promise<boolean> {
  const response = await client.request({ method: 'POST', path: '/internal/redemptions/release', programId, body: { redemptionKey } });
  return response.status === 200;
}
