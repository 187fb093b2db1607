import { LINK_MESSAGES, type CreateLinkBody, type DeleteLinkBody, type LinkResponse, type RenameLinkBody } from '@affiliate/contracts';
import { badRequest, notFound, UniqueKeyConflict } from '@affiliate/platform';
import type { AffiliateDocument } from '../data-access/affiliates';
import { linkKeyOf, toAffiliateLink, type LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { affiliateLinksChanged } from './affiliate-events';
import { claimSlug, linksOfAffiliate } from './affiliate-links';
import { affiliateByEmail, affiliateById } from './find-affiliates';
import { toLinkResponse } from './find-links';

/** The owner named in POST /links; both identifiers, when given, must name the same affiliate. */
async function ownerOf(repositories: Repositories, programId: string, input: CreateLinkBody): Promise<AffiliateDocument> {
  const owner =
    input.affiliateId !== undefined
      ? await affiliateById(repositories, programId, input.affiliateId)
      : await affiliateByEmail(repositories, programId, input.affiliateEmail ?? '');
  if (!owner) {
    throw badRequest(
      input.affiliateId !== undefined
        ? `affiliateId: no affiliate with id ${input.affiliateId} in this program`
        : `affiliateEmail: no affiliate with email ${input.affiliateEmail} in this program`,
      'resource_missing',
      input.affiliateId !== undefined ? 'affiliateId' : 'affiliateEmail',
    );
  }
  if (
    input.affiliateId !== undefined &&
    input.affiliateEmail !== undefined &&
    owner.email.toLowerCase() !== input.affiliateEmail.toLowerCase()
  ) {
    throw badRequest('affiliateEmail: does not belong to the affiliate given by affiliateId', 'parameters_inconsistent', 'affiliateEmail');
  }
  return owner;
}

/** The link named by linkId or link (both must agree), with its owner. */
async function targetOf(repositories: Repositories, programId: string, input: { linkId?: string; link?: string }) {
  const link =
    input.linkId !== undefined
      ? await repositories.links.byId(programId, input.linkId)
      : await repositories.links.bySlug(programId, input.link ?? '');
  const matches = link && (input.link === undefined || link.linkKey === linkKeyOf(programId, input.link));
  const owner = matches ? await affiliateById(repositories, programId, link.affiliateId) : null;
  if (!link || !owner)
    throw notFound(
      input.linkId !== undefined ? `No link with id ${input.linkId} in this program` : `No link "${input.link}" in this program`,
    );
  return { link, owner };
}

/** Adds a slug to an affiliate; the link and its affiliate.updated are one write. */
export async function addLink(repositories: Repositories, programId: string, input: CreateLinkBody): Promise<LinkResponse> {
  const owner = await ownerOf(repositories, programId, input);
  const existing = await linksOfAffiliate(repositories, programId, owner._id);
  const announce = await affiliateLinksChanged(repositories, owner, existing);
  const link = await claimSlug(repositories, {
    programId,
    affiliateId: owner._id,
    slug: input.link,
    events: (added) => [announce([...existing, toAffiliateLink(added)])],
  });
  if (!link) throw badRequest(LINK_MESSAGES.alreadyExists, 'link_taken', 'link');
  return toLinkResponse(repositories, programId, link);
}

/** How long the slug a link was renamed from keeps leading to it (PREVIOUS_LINK_DAYS); null: for ever. */
export type RenamePolicy = { previousLinkDays: number | null };

/**
 * Renames a link in place: same id, same statistics, new slug (a change of case only is allowed).
 * The old slug keeps leading to the link, and stays reserved for it, for the policy's period:
 * affiliates have published it. Renaming back to one of its own previous slugs takes it back.
 */
export async function renameLink(
  repositories: Repositories,
  programId: string,
  input: RenameLinkBody,
  policy: RenamePolicy,
): Promise<LinkResponse> {
  const { link, owner } = await targetOf(repositories, programId, input);
  const siblings = await linksOfAffiliate(repositories, programId, owner._id);
  const announce = await affiliateLinksChanged(repositories, owner, siblings);
  const rename = () =>
    repositories.links.change(programId, link._id, () => ({
      set: { link: input.newLink, linkKey: linkKeyOf(programId, input.newLink), updatedAt: new Date() },
      events: (next) => [announce(siblings.map((sibling) => (sibling.id === next._id ? toAffiliateLink(next) : sibling)))],
    }));
  let renamed: LinkDocument | null;
  try {
    renamed = await rename().catch(async (error: unknown) => {
      // The new slug may be one this link held before, or one whose period is over: free, then retry once.
      if (
        !(error instanceof UniqueKeyConflict) ||
        !(await repositories.links.releasePrevious(programId, input.newLink, link._id, new Date()))
      )
        throw error;
      return rename();
    });
  } catch (error) {
    if (error instanceof UniqueKeyConflict) throw badRequest(LINK_MESSAGES.alreadyExists, 'link_taken', 'link');
    throw error;
  }
  if (!renamed) throw notFound(`No link with id ${link._id} in this program`);
  if (link.linkKey !== renamed.linkKey) {
    const now = new Date();
    const until = policy.previousLinkDays === null ? null : new Date(now.getTime() + policy.previousLinkDays * 86_400_000);
    await repositories.links.keepPrevious(link, until, now);
  }
  return toLinkResponse(repositories, programId, renamed);
}

const lastLink = (slug: string) =>
  badRequest(`link: ${slug} is the affiliate's last link; every affiliate keeps at least one`, 'last_link', 'link');

/**
 * Deletes a link unless it is its affiliate's last. The store hides it first and then counts the
 * survivors, so two deletions racing for the last two links cannot both succeed; the removal then
 * carries affiliate.updated with the links that remain.
 */
export async function deleteLink(
  repositories: Repositories,
  programId: string,
  input: DeleteLinkBody,
): Promise<{ id: string; deleted: true }> {
  const { link, owner } = await targetOf(repositories, programId, input);
  if ((await repositories.links.countOf(programId, owner._id)) <= 1) throw lastLink(link.link);
  const before = await linksOfAffiliate(repositories, programId, owner._id);
  const announce = await affiliateLinksChanged(repositories, owner, before);
  let survivors: LinkDocument[] = [];
  const outcome = await repositories.links.removeUnless(
    programId,
    link._id,
    async () => {
      survivors = await repositories.links.ofAffiliates(programId, [owner._id]);
      return survivors.length === 0;
    },
    () => [announce(survivors.map(toAffiliateLink))],
  );
  if (outcome === null) throw notFound(`No link with id ${link._id} in this program`);
  if (outcome === 'kept') throw lastLink(link.link);
  await repositories.links.dropPreviousOf(programId, link._id);
  return { id: link._id, deleted: true };
}
