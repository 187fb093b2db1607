import { riskSettingsOf, type CreateSaleBody, type InternalAffiliate, type Risk } from '@affiliate/contracts';
import { assessRisk, customerKeysOf, fromMinorUnits } from '@affiliate/platform';
import { customerReferredByAnother } from '../data-access/referral-directory';
import type { SaleCredit } from './attribute-sale';
import { decidedByRules, earn, hold, isRefused, voidCommission, type CommissionEntry } from './commission';
import type { Earned } from './commission-rules';
import type { SaleDependencies } from './sale-dependencies';

/**
 * A sale's risk signals (README, "Fraud review") under the program's settings, which the affiliate
 * service hands over with the affiliate the sale is credited to. A sale through a referral keeps
 * the referral's signals (its customer, its visitor) and adds its own.
 */
export async function riskOfSale(
  deps: SaleDependencies,
  programId: string,
  input: CreateSaleBody,
  affiliate: InternalAffiliate,
  earned: Earned | null,
  credit: SaleCredit | null,
): Promise<Risk> {
  const settings = affiliate.riskSettings ?? riskSettingsOf({});
  const customerEmail = credit?.referral?.email ?? input.email;
  return assessRisk(settings, {
    customerEmail,
    affiliateEmail: affiliate.email,
    otherAffiliate:
      settings.riskActions.CUSTOMER_OF_ANOTHER_AFFILIATE === 'OFF'
        ? null
        : await otherAffiliateOf(deps, programId, affiliate.id, { email: customerEmail, customerId: input.customerId }),
    clickAgeSeconds: credit?.attribution.ageSeconds,
    visitorAffiliatesWithinHour: credit?.visitorAffiliatesWithinHour,
    commission: earned && { amount: fromMinorUnits(earned.amountMinor, earned.currency), currency: earned.currency },
    inherited: credit?.referral?.risk.signals,
  });
}

/**
 * CUSTOMER_OF_ANOTHER_AFFILIATE for a sale: its customer (the normalized email of its referral or
 * request, its customerId) already bought through another affiliate (the sale service's own claims),
 * or was first referred by another (the referral service's claims, asked through its internal route:
 * a sale by promo code or customerId knows no referral of its own). Null when neither.
 */
async function otherAffiliateOf(
  deps: SaleDependencies,
  programId: string,
  affiliateId: string,
  customer: { email?: string; customerId?: string },
): Promise<string | null> {
  const keys = customerKeysOf(customer);
  if (keys.length === 0) return null;
  const bought = await deps.repositories.customerClaims.claimedByAnother(programId, affiliateId, keys);
  if (bought) return `this customer (${bought.customerKey}) already bought through affiliate ${bought.affiliateId} (${bought.source})`;
  const referred = await customerReferredByAnother(deps.referrals, programId, affiliateId, customer);
  return referred && `this customer (${referred.customerKey}) was referred first by affiliate ${referred.affiliateId} (${referred.source})`;
}

/** Once the sale is stored, its customer (customerId, normalized email) is its affiliate's for the sales that follow (the first claim stays). */
export async function claimCustomer(
  deps: SaleDependencies,
  programId: string,
  customer: { customerId: string | null; email?: string },
  affiliateId: string,
  saleId: string,
): Promise<void> {
  const keys = customerKeysOf(customer);
  if (keys.length > 0) await deps.repositories.customerClaims.claim(programId, affiliateId, keys, `sale ${saleId}`);
}

/** The commission a sale earns, held or voided at once when its risk says so (decided by the program's risk rules). */
export function earnedCommission(earned: Earned, affiliate: InternalAffiliate, risk: Risk, now: Date): CommissionEntry {
  const entry = earn({
    affiliateId: affiliate.id,
    amountMinor: earned.amountMinor,
    currency: earned.currency,
    availableAt: earned.availableAt,
    commissionPlanId: affiliate.plan.id,
  });
  if (risk.action !== 'HOLD' && risk.action !== 'VOID') return entry;
  const decision = {
    at: now,
    by: decidedByRules('RISK_RULES'),
    reason: risk.signals
      .filter((signal) => affiliate.riskSettings?.riskActions[signal.type] === risk.action)
      .map((signal) => signal.type)
      .join(', '),
  };
  const decided = risk.action === 'HOLD' ? hold(entry, decision) : voidCommission(entry, decision);
  // A new commission is open and in no payout: neither transition refuses it.
  return isRefused(decided) ? entry : decided.entry;
}
