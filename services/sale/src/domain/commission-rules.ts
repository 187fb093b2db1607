import type { PlanInForce } from '@affiliate/contracts';
import { percentOfMinorUnits, toMinorUnits } from '@affiliate/platform';
import { utc } from '@date-fns/utc';
// The two functions' own files: the package index loads all of date-fns (300 files), which slows
// every start, and more so under tracing's module hooks (services/platform/src/telemetry).
import { addDays } from 'date-fns/addDays';
import { addMonths } from 'date-fns/addMonths';

/** Payments of a subscription after its first: they earn only while the plan's recurring rule allows. */
const RECURRING_TRIGGERS: readonly string[] = ['subscription_renewed', 'invoice_paid'];

export type Payment = { totalEarnedMinor: number; currency: string; paymentTrigger: string; at: Date };

export type Earned = {
  amountMinor: number;
  currency: string;
  /** The percentage applied; null for a flat amount. */
  rate: number | null;
  availableAt: Date;
  /** The customer's first commissioned payment (the recurring rules count from it). */
  first: boolean;
};

/**
 * The commission a payment earns under the plan in force at the sale, or null when the plan pays
 * nothing for it. `firstPaymentAt` is the customer's first commissioned payment; null when there is
 * none yet, or when the sale names no customer (then every payment is a first one).
 *
 * - the first payment earns `firstPaymentRate` when the plan has one;
 * - a recurring payment (renewal, invoice) after the first earns under ONCE never, under LIMITED
 *   only within `recurringMonths` of the first, under FOREVER always;
 * - otherwise the rate of the tier reached, else the plan's rate;
 * - PERCENTAGE is that percentage of the payment, rounded once; FLAT is that amount in the plan's currency;
 * - it is held `holdDays` days (PENDING) before it is DUE.
 */
export function commissionFor(plan: PlanInForce, payment: Payment, firstPaymentAt: Date | null): Earned | null {
  const first = firstPaymentAt === null;
  if (!first && RECURRING_TRIGGERS.includes(payment.paymentTrigger)) {
    if (plan.recurring === 'ONCE') return null;
    if (plan.recurring === 'LIMITED' && payment.at >= addMonths(firstPaymentAt, plan.recurringMonths ?? 0, { in: utc })) return null;
  }
  const rate = first && plan.firstPaymentRate !== null ? plan.firstPaymentRate : (plan.tierRate ?? plan.rate);
  // Calendar arithmetic in UTC: the same answer on every server, whatever its time zone.
  const availableAt = new Date(addDays(payment.at, plan.holdDays, { in: utc }).getTime());
  if (plan.commissionType === 'FLAT') {
    const currency = plan.currency ?? payment.currency;
    return { amountMinor: toMinorUnits(rate, currency), currency, rate: null, availableAt, first };
  }
  return { amountMinor: percentOfMinorUnits(payment.totalEarnedMinor, rate), currency: payment.currency, rate, availableAt, first };
}
