import { riskSettingsOf, type CreateSaleBody, type InternalAffiliate, type Risk } from '@affiliate/contracts';
import { assessRisk, fromMinorUnits } from '@affiliate/platform';
import type { SaleCredit } from './attribute-sale';
import { decidedByRules, earn, hold, isRefused, voidCommission, type CommissionEntry } from './commission';
import type { Earned } from './commission-rules';
import type { SaleDependencies } from './sale-dependencies';

/** The customer as CUSTOMER_OF_ANOTHER_AFFILIATE compares sales: the customerId the shop sent. */
const customerKeysOf = (input: Pick<CreateSaleBody, 'customerId'>): string[] => (input.customerId === undefined ? [] : [`customer:${input.customerId}`]);

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
  const other = await deps.repositories.customerClaims.claimedByAnother(programId, affiliate.id, customerKeysOf(input));
  return assessRisk(affiliate.riskSettings ?? riskSettingsOf({}), {
    customerEmail: credit?.referral?.email ?? input.email,
    affiliateEmail: affiliate.email,
    otherAffiliate: other && `this customer (${other.customerKey}) already bought through affiliate ${other.affiliateId} (${other.source})`,
    clickAgeSeconds: credit?.attribution.ageSeconds,
    visitorAffiliatesWithinHour: credit?.visitorAffiliatesWithinHour,
    commission: earned && { amount: fromMinorUnits(earned.amountMinor, earned.currency), currency: earned.currency },
    inherited: credit?.referral?.risk.signals,
  });
}

/** Once the sale is stored, its customer is its affiliate's for the sales that follow (the first claim stays). */
export async function claimCustomer(deps: SaleDependencies, programId: string, input: Pick<CreateSaleBody, 'customerId'>, affiliateId: string, saleId: string): Promise<void> {
  await deps.repositories.customerClaims.claim(programId, affiliateId, customerKeysOf(input), `sale ${saleId}`);
}

/** The commission a sale earns, held or voided at once when its risk says so (decided by the program's risk rules). */
export function earnedCommission(earned: Earned, affiliate: InternalAffiliate, risk: Risk, now: Date): CommissionEntry {
  const entry = earn({ affiliateId: affiliate.id, amountMinor: earned.amountMinor, currency: earned.currency, availableAt: earned.availableAt, commissionPlanId: affiliate.plan.id });
  if (risk.action !== 'HOLD' && risk.action !== 'VOID') return entry;
  const decision = { at: now, by: decidedByRules('RISK_RULES'), reason: risk.signals.filter((signal) => affiliate.riskSettings?.riskActions[signal.type] === risk.action).map((signal) => signal.type).join(', ') };
  const decided = risk.action === 'HOLD' ? hold(entry, decision) : voidCommission(entry, decision);
  // A new commission is open and in no payout: neither transition refuses it.
  return isRefused(decided) ? entry : decided.entry;
}
