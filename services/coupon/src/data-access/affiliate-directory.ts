import { AffiliateStatus, InternalAffiliate, z, type AffiliateSummary } from '@affiliate/contracts';
import { AppError, badRequest, type ServiceClient } from '@affiliate/platform';

/**
 * Affiliates belong to the affiliate service. Codes are assigned by asking it directly (its
 * internal read API), never from a local copy, so an affiliate created a moment ago is found.
 */
export type AffiliateDirectory = {
  findById(programId: string, affiliateId: string): Promise<AffiliateSummary | null>;
  findByEmail(programId: string, email: string): Promise<AffiliateSummary | null>;
  /** The affiliate with its status, or null. */
  findWithStatus(programId: string, affiliateId: string): Promise<ListedAffiliate | null>;
  /** A page of the program's ACTIVE affiliates, oldest id order as the affiliate service pages them, after `startingAfter`. */
  listActive(programId: string, limit: number, startingAfter?: string): Promise<ListedAffiliate[]>;
};

export type ListedAffiliate = AffiliateSummary & { status: z.infer<typeof AffiliateStatus>; createdAt: string };

const Listed = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  status: AffiliateStatus,
  createdAt: z.string(),
});
const unexpected = (status: number) => new AppError(502, `The affiliate service gave an unexpected answer (${status})`);

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
  const list = async (programId: string, query: Record<string, string>): Promise<ListedAffiliate[]> => {
    const response = await client.request({ method: 'GET', path: '/affiliates', programId, query });
    // A cursor of no affiliate of the program is the caller's mistake, said as the affiliate service says it.
    if (response.status === 400 && query.startingAfter)
      throw badRequest(`startingAfter: no affiliate with id ${query.startingAfter} in this program`, 'resource_missing', 'startingAfter');
    const parsed = z.array(Listed).safeParse(response.body);
    if (response.status !== 200 || !parsed.success) throw unexpected(response.status);
    return parsed.data.map(({ id, firstName, lastName, email, status, createdAt }) => ({
      id,
      firstName,
      lastName,
      email,
      status,
      createdAt,
    }));
  };
  return {
    findWithStatus: async (programId, affiliateId) => {
      const response = await client.request({ method: 'GET', path: '/affiliates', programId, query: { id: affiliateId } });
      if (response.status !== 200) throw unexpected(response.status);
      if (response.body === null) return null;
      const parsed = Listed.safeParse(response.body);
      if (!parsed.success) throw unexpected(response.status);
      // `id` also resolves a click id or a slug: only the affiliate with exactly this id counts.
      return parsed.data.id === affiliateId ? parsed.data : null;
    },
    listActive: (programId, limit, startingAfter) =>
      list(programId, { status: 'ACTIVE', limit: String(limit), ...(startingAfter ? { startingAfter } : {}) }),
    findById: (programId, affiliateId) => find(programId, { id: affiliateId }),
    findByEmail: (programId, email) => find(programId, { email }),
  };
}
