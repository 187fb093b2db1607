import { randomUUID } from 'node:crypto';
import type { FullPayoutDetails, PayoutStatus } from '@affiliate/contracts';
import { badRequest } from '@affiliate/platform';
import type { PayoutDocument, PayoutItemDocument } from '../data-access/payouts';

/**
 * A payout's own states, apart from the run that makes it (domain/payouts.ts: lease, grouping,
 * batches). DRAFT while its run claims the commissions (no read shows it); PENDING once they are
 * claimed; then PAID or FAILED by PUT /payouts, `settling` until every commission followed.
 */
export const totalOf = (items: { amountMinor: number }[]): number => items.reduce((total, item) => total + item.amountMinor, 0);

export function draftPayout(input: {
  programId: string;
  affiliateId: string;
  currency: string;
  items: PayoutItemDocument[];
  payee: { name: string; email: string; payoutDetails: FullPayoutDetails | null };
  now: Date;
}): PayoutDocument {
  const { now, ...rest } = input;
  return {
    _id: randomUUID(),
    ...rest,
    amountMinor: totalOf(input.items),
    status: 'DRAFT',
    externalReference: null,
    settling: false,
    paidAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * A draft whose claims are done: PENDING with what it claimed, or nothing when the claimed total is
 * not positive (a reversal voided its positive commissions meanwhile): then it is discarded.
 */
export function finishedDraft(claimed: PayoutItemDocument[], now: Date): Partial<PayoutDocument> | 'DISCARD' {
  const amountMinor = totalOf(claimed);
  if (amountMinor <= 0) return 'DISCARD';
  return { status: 'PENDING', items: claimed, amountMinor, updatedAt: now };
}

/**
 * PUT /payouts: PENDING becomes PAID or FAILED and is settling until its commissions follow. The
 * same status again while settling is a retry that finishes it (the same fields); the same status
 * once settled is nothing to do (null); any other change of a settled payout is a 400.
 */
export function settlePayout(
  current: PayoutDocument,
  input: { status: Exclude<PayoutStatus, 'PENDING'>; externalReference?: string },
  now: Date,
): Partial<PayoutDocument> | null {
  if (current.status === 'DRAFT') return null;
  if (current.status === input.status && !current.settling) return null;
  if (current.status !== 'PENDING' && current.status !== input.status) {
    throw badRequest(`Payout ${current._id} is ${current.status}; it cannot become ${input.status}`, 'status_transition_invalid', 'status');
  }
  return {
    status: input.status,
    settling: true,
    externalReference: input.externalReference ?? current.externalReference,
    paidAt: input.status === 'PAID' ? (current.paidAt ?? now) : null,
    updatedAt: now,
  };
}
