import { randomBytes, randomUUID } from 'node:crypto';
import type { AffiliateLink, EventEnvelope } from '@affiliate/contracts';
import { linkKeyOf, toAffiliateLink, type LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';

/** Each affiliate's links, oldest first. */
export async function linksOfAffiliates(
  repositories: Repositories,
  programId: string,
  affiliateIds: string[],
): Promise<Map<string, AffiliateLink[]>> {
  const byAffiliate = new Map<string, AffiliateLink[]>(affiliateIds.map((id) => [id, []]));
  if (affiliateIds.length === 0) return byAffiliate;
  const links = await repositories.links.ofAffiliates(programId, affiliateIds);
  for (const link of links) byAffiliate.get(link.affiliateId)?.push(toAffiliateLink(link));
  return byAffiliate;
}

export async function linksOfAffiliate(repositories: Repositories, programId: string, affiliateId: string): Promise<AffiliateLink[]> {
  return (await linksOfAffiliates(repositories, programId, [affiliateId])).get(affiliateId) ?? [];
}

export type SlugClaim = {
  programId: string;
  affiliateId: string;
  slug: string;
  /** Events that must be published exactly when the link exists (written with it). */
  events?: (link: LinkDocument) => EventEnvelope[];
};

/** Inserts the link; null when another link of the program already has that slug (any case). */
export async function claimSlug(repositories: Repositories, claim: SlugClaim): Promise<LinkDocument | null> {
  const now = new Date();
  const link: LinkDocument = {
    _id: randomUUID(),
    programId: claim.programId,
    affiliateId: claim.affiliateId,
    link: claim.slug,
    linkKey: linkKeyOf(claim.programId, claim.slug),
    createdAt: now,
    updatedAt: now,
  };
  return repositories.links.claim(link, (claimed) => claim.events?.(claimed) ?? []);
}

const MAX_SLUG_BASE = 80;
const NUMBERED_ATTEMPTS = 10;
const MAX_ATTEMPTS = 50;

/** The email's local part reduced to the slug alphabet: lower-case letters, digits, hyphens. */
export function slugBaseOf(email: string): string {
  const localPart = email.split('@')[0] ?? '';
  const base = localPart
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '')
    .slice(0, MAX_SLUG_BASE);
  return base || 'affiliate';
}

/**
 * Claims the first free slug derived from the email: `jane`, `jane-2`, … and, once many of those
 * are taken (a crowd signing up with the same local part), `jane-<random>`, so concurrent
 * sign-ups stop colliding quickly. Every attempt is an insert, so no two affiliates get one slug.
 */
export async function claimGeneratedSlug(
  repositories: Repositories,
  claim: Omit<SlugClaim, 'slug'> & { email: string },
): Promise<LinkDocument> {
  const base = slugBaseOf(claim.email);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const suffix = attempt === 1 ? '' : attempt <= NUMBERED_ATTEMPTS ? `-${attempt}` : `-${randomBytes(4).toString('hex')}`;
    const link = await claimSlug(repositories, { ...claim, slug: `${base}${suffix}` });
    if (link) return link;
  }
  throw new Error(`no free slug found for ${base} after ${MAX_ATTEMPTS} attempts`);
}

/** The affiliate's oldest link: where a referral or sale without a link of its own is counted. */
export async function firstLinkOf(repositories: Repositories, programId: string, affiliateId: string): Promise<LinkDocument | null> {
  const affiliate = await repositories.affiliates.byId(programId, affiliateId);
  const first = affiliate?.firstLinkId ? await repositories.links.byId(programId, affiliate.firstLinkId) : null;
  // The first link is the oldest (it is claimed before the affiliate is written); once deleted, the oldest left.
  return first ?? repositories.links.firstOf(programId, affiliateId);
}
