import type { LinkResponse } from '@affiliate/contracts';
import type { PageRequest } from '@affiliate/platform';
import type { LinkDocument, LinkFilters } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { fullUrlsOf } from './full-urls';
import { statsOfLinks } from './link-stats';
import { programSettingsOf } from './program-settings';

/** Links with their statistics and full URLs; links whose affiliate no longer exists are left out. */
export async function toLinkResponses(repositories: Repositories, programId: string, links: LinkDocument[]): Promise<LinkResponse[]> {
  const owners = new Set(
    (
      await repositories.affiliates.byIds(
        programId,
        links.map((link) => link.affiliateId),
      )
    ).map((affiliate) => affiliate._id),
  );
  const live = links.filter((link) => owners.has(link.affiliateId));
  const ids = live.map((link) => link._id);
  const settings = await programSettingsOf(repositories, programId);
  const [stats, previous] = await Promise.all([
    statsOfLinks(repositories, programId, ids, settings.reportingCurrency),
    repositories.links.previousOf(programId, ids, new Date()),
  ]);
  return live.map((link) => ({
    id: link._id,
    link: link.link,
    previousLinks: (previous.get(link._id) ?? []).map((old) => ({
      link: old.link,
      reservedUntil: old.reservedUntil?.toISOString() ?? null,
    })),
    affiliateId: link.affiliateId,
    ...stats.get(link._id)!,
    fullURLs: fullUrlsOf(settings, link.link),
    createdAt: link.createdAt.toISOString(),
    updatedAt: link.updatedAt.toISOString(),
  }));
}

export async function toLinkResponse(repositories: Repositories, programId: string, link: LinkDocument): Promise<LinkResponse> {
  const [response] = await toLinkResponses(repositories, programId, [link]);
  if (!response) throw new Error(`link ${link._id} has no live affiliate`);
  return response;
}

export type LinkLookup = { id?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

/** Every lookup answers an array: the links matching all the given identifiers, oldest first. */
export async function lookUpLinks(repositories: Repositories, programId: string, query: LinkLookup): Promise<LinkResponse[]> {
  const { affiliateEmail, ...lookup } = query;
  if (affiliateEmail !== undefined) {
    const owner = await repositories.affiliates.byEmail(programId, affiliateEmail);
    if (!owner || (query.affiliateId !== undefined && owner._id !== query.affiliateId)) return [];
    lookup.affiliateId = owner._id;
  }
  const links = await repositories.links.lookUp(programId, lookup);
  return toLinkResponses(repositories, programId, links);
}

export async function listLinks(
  repositories: Repositories,
  programId: string,
  filters: LinkFilters,
  page: PageRequest,
): Promise<{ items: LinkResponse[]; nextCursor: string | null }> {
  const { items, nextCursor } = await repositories.links.list(programId, filters, page);
  return { items: await toLinkResponses(repositories, programId, items), nextCursor };
}
