import { createHmac } from 'node:crypto';
import type { Click, RecordClickBody } from '@affiliate/contracts';
import { isbot } from 'isbot';
import type { z } from 'zod';
import { badRequest } from '@affiliate/platform';
import type { LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { programSettingsOf } from './program-settings';

/** Imported clicks may be this old at most. */
const MAX_IMPORT_AGE_MS = 90 * 86_400_000;
/** A client clock this far ahead of ours is still "now". */
const CLOCK_SKEW_MS = 5 * 60_000;

/** A live link of a live affiliate: links whose owner is gone (or never fully created) do not count. */
export async function liveLinkBySlug(repositories: Repositories, programId: string, slug: string): Promise<LinkDocument | null> {
  const link = await repositories.links.bySlug(programId, slug);
  if (!link) return null;
  return (await repositories.affiliates.byId(programId, link.affiliateId)) ? link : null;
}

/**
 * POST /clicks. A bot is answered and forgotten. A click with an identity (the visitor id, else the
 * address and user agent) claims its (link, visitor) pair for the program's deduplication window;
 * a repeat within it gets the first click's id and is not counted. A click without an identity
 * counts every time, as before identities existed.
 */
export async function recordClick(repositories: Repositories, programId: string, input: RecordClickBody): Promise<z.infer<typeof Click>> {
  const at = clickTimeOf(input.occurredAt);
  // A click nobody can be told apart in needs no settings: it counts, as before identities existed.
  const identifiable = input.visitorId !== undefined || input.ipAddress !== undefined;
  const [link, settings] = await Promise.all([liveLinkBySlug(repositories, programId, input.link), identifiable ? programSettingsOf(repositories, programId) : null]);
  if (!link) throw badRequest(`link: no referral link "${input.link}" in this program`);
  const answer = { link: link.link, affiliateId: link.affiliateId };
  if (input.userAgent !== undefined && isbot(input.userAgent)) return { ...answer, clickId: null, counted: false, reason: 'BOT' };

  const clickDedupSeconds = settings?.clickDedupSeconds ?? 0;
  const identity = clickDedupSeconds > 0 ? await identityOf(repositories, programId, input) : null;
  if (identity !== null) {
    const first = await repositories.clickClaims.holder(programId, link._id, identity, at);
    if (first !== null) return { ...answer, clickId: first, counted: false, reason: 'DUPLICATE' };
  }
  const clickId = await repositories.clickCounters.next(programId);
  if (identity !== null) {
    const until = new Date(at.getTime() + clickDedupSeconds * 1000);
    const claim = await repositories.clickClaims.claim(programId, link._id, identity, clickId, at, until);
    // A simultaneous repeat claimed first: this click id stays unused.
    if (!claim.claimed) return { ...answer, clickId: claim.clickId, counted: false, reason: 'DUPLICATE' };
  }
  await repositories.linkActivity.recordClick(programId, clickId, {
    linkId: link._id,
    affiliateId: link.affiliateId,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: at,
    landingUrl: input.landingUrl ?? null,
    referrer: input.referrer ?? null,
    createdAt: at,
  });
  if (input.visitorId !== undefined) {
    await repositories.visitors.recordClick(programId, input.visitorId, { clickId, linkId: link._id, affiliateId: link.affiliateId, at });
  }
  return { ...answer, clickId, counted: true, reason: null };
}

function clickTimeOf(occurredAt: string | undefined): Date {
  const now = Date.now();
  if (occurredAt === undefined) return new Date(now);
  const at = Date.parse(occurredAt);
  if (at > now + CLOCK_SKEW_MS) throw badRequest('occurredAt: must not be in the future');
  if (at < now - MAX_IMPORT_AGE_MS) throw badRequest('occurredAt: must be at most 90 days ago');
  return new Date(at);
}

/**
 * Who clicked: the visitor id, else an HMAC of address and user agent under the program's secret
 * (so the address itself is never stored, and identities of two programs cannot be matched), else
 * nobody we can tell apart.
 */
async function identityOf(repositories: Repositories, programId: string, input: RecordClickBody): Promise<string | null> {
  if (input.visitorId !== undefined) return `visitor:${input.visitorId}`;
  if (input.ipAddress === undefined) return null;
  const secret = await repositories.clickSecrets.secretOf(programId);
  return `hmac:${createHmac('sha256', secret).update(`${input.ipAddress}\n${input.userAgent ?? ''}`).digest('base64url')}`;
}

export async function clickById(repositories: Repositories, programId: string, clickId: number) {
  return repositories.linkActivity.click(programId, clickId);
}

export async function affiliateIdOfClick(repositories: Repositories, programId: string, clickId: number): Promise<string | null> {
  return (await clickById(repositories, programId, clickId))?.affiliateId ?? null;
}
