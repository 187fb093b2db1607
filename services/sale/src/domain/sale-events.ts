import type { EventEnvelope, ExpandedSale, InternalAffiliate, Referral } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { toSale, type SaleDocument } from '../data-access/sales';

/**
 * sale.created expands the affiliate and the referral (spec, payload rule 2): the affiliate's public
 * fields only, never its payout details or the plan's terms the internal answer carries.
 */
export function saleCreated(sale: SaleDocument, affiliate: InternalAffiliate, referral: Referral | null): EventEnvelope {
  const { id, firstName, lastName, email, status, commissionRate } = affiliate;
  const data: ExpandedSale = { ...toSale(sale), affiliate: { id, firstName, lastName, email, status, commissionRate }, referral };
  return createEvent('sale.created', sale.programId, data);
}

export const saleUpdated = (sale: SaleDocument): EventEnvelope => createEvent('sale.updated', sale.programId, toSale(sale));

export const saleDeleted = (sale: SaleDocument): EventEnvelope => createEvent('sale.deleted', sale.programId, { id: sale._id });
