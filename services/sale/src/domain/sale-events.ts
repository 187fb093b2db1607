import type { EventEnvelope, ExpandedSale, InternalAffiliate, Referral } from '@affiliate/contracts';
import { createEvent } from '@affiliate/platform';
import { toSale, type SaleDocument } from '../data-access/sales';

/** sale.created expands the affiliate and the referral (spec, payload rule 2). */
export function saleCreated(sale: SaleDocument, affiliate: InternalAffiliate, referral: Referral | null): EventEnvelope {
  const data: ExpandedSale = { ...toSale(sale), affiliate, referral };
  return createEvent('sale.created', sale.programId, data);
}

export const saleUpdated = (sale: SaleDocument): EventEnvelope => createEvent('sale.updated', sale.programId, toSale(sale));

export const saleDeleted = (sale: SaleDocument): EventEnvelope => createEvent('sale.deleted', sale.programId, { id: sale._id });
