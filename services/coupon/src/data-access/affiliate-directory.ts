import { InternalAffiliate, type AffiliateSummary } from '@affiliate/contracts';
import { AppError, type ServiceClient } from '@affiliate/platform';

/**
 * Affiliates belong to the affiliate service. Codes are assigned by asking it directly (its
 * internal read API), never from a local copy, so an affiliate created a moment ago is found.
 */
export type AffiliateDirectory = {
  findById(programId: string, affiliateId: string): Promise<AffiliateSummary | null>;
  findByEmail(programId: string, email: string): Promise<AffiliateSummary | null>;
};

export function affiliateDirectory(client: ServiceClient): AffiliateDirectory {
  const find = async (programId: string, query: { id?: string; email?: string }): Promise<AffiliateSummary | null> => {
    const response = await client.request({ method: 'GET', path: '/internal/affiliates', programId, query });
    if (response.status === 404) return null;
    const parsed = InternalAffiliate.safeParse(response.body);
    if (response.status !== 200 || !parsed.success) {
      throw new AppError(502, `The affiliate service gave an unexpected answer (${response.status})`);
    }
    const { id, firstName, lastName, email } = parsed.data;
    return { id, firstName, lastName, email };
  };
  return {
    findById: (programId, affiliateId) => find(programId, { id: affiliateId }),
    findByEmail: (programId, email) => find(programId, { email }),
  };
}
