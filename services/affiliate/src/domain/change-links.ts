import { LINK_MESSAGES, type CreateLinkBody, type DeleteLinkBody, type LinkResponse, type RenameLinkBody } from '@affiliate/contracts';
import { badRequest, isDuplicateKey, notFound, updateWithEvents } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import { linkKeyOf, OLDEST_FIRST, toAffiliateLink, type LinkDocument } from '../data-access/links';
import type { Models } from '../data-access/models';
import { affiliateUpdated } from './affiliate-events';
import { claimSlug, linksOfAffiliate } from './affiliate-links';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import { toLinkResponse } from './find-links';

/** The owner named in POST /links; both identifiers, when given, must name the same affiliate. */
async function ownerOf(models: Models, programId: string, input: CreateLinkBody): Promise<AffiliateDocument> {
  const owner =
    input.affiliateId !== undefined ? await affiliateById(models, programId, input.affiliateId) : await affiliateByEmail(models, programId, input.affiliateEmail ?? '');
  if (!owner) {
    throw badRequest(
      input.affiliateId !== undefined
        ? `affiliateId: no affiliate with id ${input.affiliateId} in this program`
        : `affiliateEmail: no affiliate with email ${input.affiliateEmail} in this program`,
    );
  }
  if (input.affiliateId !== undefined && input.affiliateEmail !== undefined && owner.email.toLowerCase() !== input.affiliateEmail.toLowerCase()) {
    throw badRequest('affiliateEmail: does not belong to the affiliate given by affiliateId');
  }
  return owner;
}

/** The link named by linkId or link (both must agree), with its owner. */
async function targetOf(models: Models, programId: string, input: { linkId?: string; link?: string }) {
  const link =
    input.linkId !== undefined
      ? await models.links.findOne({ _id: input.linkId, programId }).lean()
      : await models.links.findOne({ linkKey: linkKeyOf(programId, input.link ?? ''), programId }).lean();
  const matches = link && (input.link === undefined || link.linkKey === linkKeyOf(programId, input.link));
  const owner = matches ? await affiliateById(models, programId, link.affiliateId) : null;
  if (!link || !owner) throw notFound(input.linkId !== undefined ? `No link with id ${input.linkId} in this program` : `No link "${input.link}" in this program`);
  return { link, owner };
}

/** Adds a slug to an affiliate; the link and its affiliate.updated are one write. */
export async function addLink(models: Models, programId: string, input: CreateLinkBody): Promise<LinkResponse> {
  const owner = await ownerOf(models, programId, input);
  const existing = await linksOfAffiliate(models, programId, owner._id);
  const link = await claimSlug(models, {
    programId,
    affiliateId: owner._id,
    slug: input.link,
    events: (added) => [affiliateUpdated(owner, [...existing, toAffiliateLink(added)])],
  });
  if (!link) throw badRequest(LINK_MESSAGES.alreadyExists);
  return toLinkResponse(models, programId, link);
}

/** Renames a link in place: same id, same statistics, new slug (a change of case only is allowed). */
export async function renameLink(models: Models, programId: string, input: RenameLinkBody): Promise<LinkResponse> {
  const { link, owner } = await targetOf(models, programId, input);
  const siblings = await linksOfAffiliate(models, programId, owner._id);
  let renamed: LinkDocument | null;
  try {
    renamed = await updateWithEvents(models.links, { _id: link._id, programId }, () => ({
      set: { link: input.newLink, linkKey: linkKeyOf(programId, input.newLink), updatedAt: new Date() },
      events: (next) => [affiliateUpdated(owner, siblings.map((sibling) => (sibling.id === next._id ? toAffiliateLink(next) : sibling)))],
    }));
  } catch (error) {
    if (isDuplicateKey(error)) throw badRequest(LINK_MESSAGES.alreadyExists);
    throw error;
  }
  if (!renamed) throw notFound(`No link with id ${link._id} in this program`);
  return toLinkResponse(models, programId, renamed);
}

const lastLink = (slug: string) => badRequest(`link: ${slug} is the affiliate's last link; every affiliate keeps at least one`);

/**
 * Deletes a link unless it is its affiliate's last. Without transactions the check is made safe
 * by order: the link is tombstoned first, then the survivors are counted; if none survived (two
 * deletions raced), the tombstone is lifted again. Only then does the tombstone get its
 * affiliate.updated and release the slug; the relay removes it after publishing.
 */
export async function deleteLink(models: Models, programId: string, input: DeleteLinkBody): Promise<{ id: string; deleted: true }> {
  const { link, owner } = await targetOf(models, programId, input);
  if ((await models.links.countDocuments({ programId, affiliateId: owner._id })) <= 1) throw lastLink(link.link);

  const deletedAt = new Date();
  const tombstoned = await models.links.updateOne({ _id: link._id, programId, deletedAt: null }, { $set: { deletedAt } });
  if (tombstoned.modifiedCount !== 1) throw notFound(`No link with id ${link._id} in this program`);
  const survivors = await models.links.find({ programId, affiliateId: owner._id }).sort(OLDEST_FIRST).lean();
  if (survivors.length === 0) {
    await models.links.updateOne({ _id: link._id, deletedAt }, { $set: { deletedAt: null } });
    throw lastLink(link.link);
  }
  await models.links.updateOne(
    { _id: link._id, deletedAt },
    { $push: { _outbox: affiliateUpdated(owner, survivors.map(toAffiliateLink)) }, $unset: { linkKey: 1 } },
  );
  return { id: link._id, deleted: true };
}
