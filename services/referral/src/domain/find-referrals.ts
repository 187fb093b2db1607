import type { Referral } from '@affiliate/contracts';
import { csvText, notFound, type CsvRow, type PageRequest } from '@affiliate/platform';
import type { ReferralRepositories } from '../data-access/repositories';
import { toReferral, type ReferralFilters } from '../data-access/referrals';

export async function referralById(repositories: ReferralRepositories, programId: string, referralId: string): Promise<Referral> {
  const referral = await repositories.referrals.byId(programId, referralId);
  if (!referral) throw notFound(`No referral with id ${referralId} in this program`);
  return toReferral(referral);
}

/** Referrals matching every filter given (none: the whole program), newest first, one page. */
export async function listReferrals(
  repositories: ReferralRepositories,
  programId: string,
  filters: ReferralFilters,
  page: PageRequest,
): Promise<{ items: Referral[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.referrals.list(programId, filters, page);
  return { items: items.map(toReferral), nextCursor };
}

/** The filtered referrals as CSV rows, newest first, the customer's text guarded against formulas. */
export async function* referralCsvRows(
  repositories: ReferralRepositories,
  programId: string,
  filters: ReferralFilters,
): AsyncGenerator<CsvRow> {
  for await (const referral of repositories.referrals.exportRows(programId, filters)) {
    yield [
      referral._id,
      referral.affiliateId,
      referral.linkId ?? '',
      csvText(referral.email),
      csvText(referral.name),
      csvText(referral.referredUserExternalId),
      csvText(referral.plan),
      referral.status,
      referral.createdAt.toISOString(),
    ];
  }
}
