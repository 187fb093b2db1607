import type { RedeemPromotionalCodeBody } from '@affiliate/contracts';
import { badRequest, fromMinorUnits, toMinorUnits } from '@affiliate/platform';
import type { CouponRecord } from '../data-access/coupon-model';
import type { PromotionalCodeRecord } from '../data-access/promotional-code-model';

/**
 * Every reason a sale may not use a code (DESIGN.md §3), checked before anything is counted. The
 * redemption limits are not checked here: the conditional increments decide them, race-free.
 * Returns the affiliate the sale is attributed to.
 */
export function checkRedeemable(
  sale: RedeemPromotionalCodeBody,
  code: PromotionalCodeRecord | null,
  coupon: CouponRecord | null,
  now = new Date(),
): string {
  if (!code || !coupon)
    throw badRequest(`Promotional code ${sale.code} does not exist in this program`, 'promotional_code_not_redeemable', 'code');
  const name = code.code;
  if (!code.active) throw badRequest(`Promotional code ${name} is not active`, 'promotional_code_not_redeemable', 'code');
  if (code.expiresAt && new Date(code.expiresAt) <= now)
    throw badRequest(`Promotional code ${name} has expired`, 'promotional_code_not_redeemable', 'code');
  if (!code.affiliateId)
    throw badRequest(
      `Promotional code ${name} has no assigned affiliate, so it cannot attribute a sale`,
      'promotional_code_not_redeemable',
      'code',
    );
  if (!coupon.valid) throw badRequest(`The coupon of promotional code ${name} is not valid`, 'promotional_code_not_redeemable', 'code');
  if (coupon.redeemBy && new Date(coupon.redeemBy) <= now) {
    throw badRequest(
      `The coupon of promotional code ${name} could only be redeemed until ${new Date(coupon.redeemBy).toISOString()}`,
      'promotional_code_not_redeemable',
      'code',
    );
  }
  if (coupon.couponType === 'FLAT' && coupon.currency && sale.currency && sale.currency !== coupon.currency) {
    throw badRequest(
      `The coupon of promotional code ${name} is in ${coupon.currency}; the sale is in ${sale.currency}`,
      'promotional_code_not_redeemable',
      'code',
    );
  }
  if (code.minimumAmountMinor != null && code.minimumAmountCurrency) {
    if (code.minimumAmountCurrency && sale.currency && sale.currency !== code.minimumAmountCurrency) {
      throw badRequest(
        `Promotional code ${name} requires an order in ${code.minimumAmountCurrency}; the sale is in ${sale.currency}`,
        'promotional_code_not_redeemable',
        'code',
      );
    }
    if (toMinorUnits(sale.totalEarned, code.minimumAmountCurrency) < code.minimumAmountMinor) {
      throw badRequest(
        `Promotional code ${name} requires a minimum order of ${fromMinorUnits(code.minimumAmountMinor, code.minimumAmountCurrency)} ${code.minimumAmountCurrency}`,
        'promotional_code_not_redeemable',
        'code',
      );
    }
  }
  if (code.firstTimeOrder && sale.firstTimeOrder !== true) {
    throw badRequest(`Promotional code ${name} is limited to a customer's first order`, 'promotional_code_not_redeemable', 'code');
  }
  if (code.limitToCustomers && sale.customerId !== code.customerId) {
    throw badRequest(`Promotional code ${name} is limited to another customer`, 'promotional_code_not_redeemable', 'code');
  }
  if (code.limitToAffiliate && sale.affiliateId !== undefined && sale.affiliateId !== code.affiliateId) {
    throw badRequest(`Promotional code ${name} may only be redeemed for its assigned affiliate`, 'promotional_code_not_redeemable', 'code');
  }
  if (coupon.limitToProducts && !(sale.productIds ?? []).some((productId) => coupon.productIds.includes(productId))) {
    throw badRequest(
      `The coupon of promotional code ${name} applies only to specific products, and the sale has none of them`,
      'promotional_code_not_redeemable',
      'code',
    );
  }
  return code.affiliateId;
}
