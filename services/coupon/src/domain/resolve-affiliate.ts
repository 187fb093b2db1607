import type { AffiliateSummary } from '@affiliate/contracts';
import { badRequest, notFound } from '@affiliate/platform';
import type { AffiliateDirectory } from '../data-access/affiliate-directory';

/** The affiliate a code is being assigned to, asked of its owner; null when none is named. */
export async function resolveAffiliate(
  directory: AffiliateDirectory,
  programId: string,
  named: { affiliateId?: string | null; affiliateEmail?: string },
): Promise<AffiliateSummary | null> {
  const byId = named.affiliateId ? await directory.findById(programId, named.affiliateId) : null;
  if (named.affiliateId && !byId) throw notFound(`Affiliate ${named.affiliateId} not found in this program`);
  const byEmail = named.affiliateEmail ? await directory.findByEmail(programId, named.affiliateEmail) : null;
  if (named.affiliateEmail && !byEmail) throw notFound(`No affiliate with email ${named.affiliateEmail} in this program`);
  if (byId && byEmail && byId.id !== byEmail.id) {
    throw badRequest(
      'affiliateId and affiliateEmail name two different affiliates; send one of them',
      'parameters_inconsistent',
      'affiliateEmail',
    );
  }
  return byId ?? byEmail;
}
