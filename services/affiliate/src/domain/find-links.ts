import type { LinkResponse } from '@affiliate/contracts';
import { findPage, type PageRequest } from '@affiliate/platform';
import type { FilterQuery } from 'mongoose';
import { emailKeyOf } from '../data-access/affiliates';
import { linkKeyOf, OLDEST_FIRST, type LinkDocument } from '../data-access/links';
import type { Models } from '../data-access/models';
import { fullUrlsOf } from './full-urls';
import { statsOfLinks } from './link-stats';
import { programSettingsOf } from './program-settings';

/** Links with their statistics and full URLs; links whose affiliate no longer exists are left out. */
export async function toLinkResponses(models: Models, programId: string, links: LinkDocument[]): Promise<LinkResponse[]> {
  const owners = new Set(
    (await models.affiliates.find({ programId, _id: { $in: [...new Set(links.map((link) => link.affiliateId))] } }).select('_id').lean()).map(
      (affiliate) => affiliate._id,
    ),
  );
  const live = links.filter((link) => owners.has(link.affiliateId));
  const [settings, stats] = await Promise.all([programSettingsOf(models, programId), statsOfLinks(models, programId, live.map((link) => link._id))]);
  return live.map((link) => ({
    id: link._id,
    link: link.link,
    affiliateId: link.affiliateId,
    ...(stats.get(link._id) ?? { clicks: 0, referrals: 0, sales: 0, totalRevenue: 0 }),
    fullURLs: fullUrlsOf(settings, link.link),
    createdAt: link.createdAt.toISOString(),
    updatedAt: link.updatedAt.toISOString(),
  }));
}

export async function toLinkResponse(models: Models, programId: string, link: LinkDocument): Promise<LinkResponse> {
  const [response] = await toLinkResponses(models, programId, [link]);
  if (!response) throw new Error(`link ${link._id} has no live affiliate`);
  return response;
}

export type LinkLookup = { id?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

/** Every lookup answers an array: the links matching all the given identifiers, oldest first. */
export async function lookUpLinks(models: Models, programId: string, query: LinkLookup): Promise<LinkResponse[]> {
  const filter: FilterQuery<LinkDocument> = { programId };
  if (query.id !== undefined) filter._id = query.id;
  if (query.link !== undefined) filter.linkKey = linkKeyOf(programId, query.link);
  if (query.affiliateId !== undefined) filter.affiliateId = query.affiliateId;
  if (query.affiliateEmail !== undefined) {
    const owner = await models.affiliates.findOne({ programId, emailKey: emailKeyOf(programId, query.affiliateEmail) }).select('_id').lean();
    if (!owner || (query.affiliateId !== undefined && owner._id !== query.affiliateId)) return [];
    filter.affiliateId = owner._id;
  }
  const links = await models.links.find(filter).sort(OLDEST_FIRST).lean();
  return toLinkResponses(models, programId, links);
}

export async function listLinks(models: Models, programId: string, page: PageRequest): Promise<{ items: LinkResponse[]; nextCursor: string | null }> {
  const { items, nextCursor } = await findPage(models.links, { programId }, page);
  return { items: await toLinkResponses(models, programId, items), nextCursor };
}
