import type { Click, RecordClickBody } from '@affiliate/contracts';
import type { z } from 'zod';
import { badRequest, isDuplicateKey } from '@affiliate/platform';
import { linkKeyOf, type LinkDocument } from '../data-access/links';
import type { Models } from '../data-access/models';

/** A live link of a live affiliate: links whose owner is gone (or never fully created) do not count. */
export async function liveLinkBySlug(models: Models, programId: string, slug: string): Promise<LinkDocument | null> {
  const link = await models.links.findOne({ linkKey: linkKeyOf(programId, slug), programId }).lean();
  if (!link) return null;
  return (await models.affiliates.exists({ _id: link.affiliateId, programId })) ? link : null;
}

/**
 * Click ids count up per program. Each caller takes the counter's value from before its own atomic
 * $inc (the pre-image, which the server copies under the document's lock) and adds one, so no two
 * clicks share an id. Not the value after the $inc: the local server may return another caller's
 * later state there (DESIGN.md section 8, services/platform/test/database-guarantees.test.ts).
 */
async function nextClickId(models: Models, programId: string): Promise<number> {
  for (;;) {
    try {
      const before = await models.clickCounters
        .findOneAndUpdate({ _id: programId }, { $inc: { lastClickId: 1 } }, { upsert: true, returnDocument: 'before' })
        .lean();
      // No pre-image: this call created the counter, at 1.
      return (before?.lastClickId ?? 0) + 1;
    } catch (error) {
      // Two first clicks of a program both tried to create the counter; the loser increments it.
      if (!isDuplicateKey(error)) throw error;
    }
  }
}

export async function recordClick(models: Models, programId: string, input: RecordClickBody): Promise<z.infer<typeof Click>> {
  const link = await liveLinkBySlug(models, programId, input.link);
  if (!link) throw badRequest(`link: no referral link "${input.link}" in this program`);
  const clickId = await nextClickId(models, programId);
  const now = new Date();
  await models.linkActivity.create({
    programId,
    kind: 'click',
    sourceId: String(clickId),
    clickId,
    linkId: link._id,
    affiliateId: link.affiliateId,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: now,
    landingUrl: input.landingUrl ?? null,
    createdAt: now,
  });
  return { clickId, link: link.link, affiliateId: link.affiliateId };
}

export async function clickById(models: Models, programId: string, clickId: number) {
  return models.linkActivity.findOne({ programId, kind: 'click', sourceId: String(clickId) }).lean();
}

export async function affiliateIdOfClick(models: Models, programId: string, clickId: number): Promise<string | null> {
  return (await clickById(models, programId, clickId))?.affiliateId ?? null;
}
