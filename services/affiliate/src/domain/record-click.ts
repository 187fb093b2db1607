import type { Click, RecordClickBody } from '@affiliate/contracts';
import type { z } from 'zod';
import { badRequest } from '@affiliate/platform';
import type { LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';

/** A live link of a live affiliate: links whose owner is gone (or never fully created) do not count. */
export async function liveLinkBySlug(repositories: Repositories, programId: string, slug: string): Promise<LinkDocument | null> {
  const link = await repositories.links.bySlug(programId, slug);
  if (!link) return null;
  return (await repositories.affiliates.byId(programId, link.affiliateId)) ? link : null;
}

export async function recordClick(repositories: Repositories, programId: string, input: RecordClickBody): Promise<z.infer<typeof Click>> {
  const link = await liveLinkBySlug(repositories, programId, input.link);
  if (!link) throw badRequest(`link: no referral link "${input.link}" in this program`);
  const clickId = await repositories.clickCounters.next(programId);
  const now = new Date();
  await repositories.linkActivity.recordClick(programId, clickId, {
    linkId: link._id,
    affiliateId: link.affiliateId,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: now,
    landingUrl: input.landingUrl ?? null,
    createdAt: now,
  });
  return { clickId, link: link.link, affiliateId: link.affiliateId, counted: true, reason: null };
}

export async function clickById(repositories: Repositories, programId: string, clickId: number) {
  return repositories.linkActivity.click(programId, clickId);
}

export async function affiliateIdOfClick(repositories: Repositories, programId: string, clickId: number): Promise<string | null> {
  return (await clickById(repositories, programId, clickId))?.affiliateId ?? null;
}
