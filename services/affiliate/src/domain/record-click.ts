import { createHmac } from 'node:crypto';
import type { Click, RecordClickBody } from '@affiliate/contracts';
import { isbot } from 'isbot';
import type { z } from 'zod';
import { badRequest, GroupCommit } from '@affiliate/platform';
import type { LinkDocument } from '../data-access/links';
import type { Repositories } from '../data-access/repositories';
import { recentProgramSettingsOf } from './program-settings';

/** Imported clicks may be this old at most. */
const MAX_IMPORT_AGE_MS = 90 * 86_400_000;
/** A client clock this far ahead of ours is still "now". */
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * A live link of a live affiliate: links whose owner is gone (or never fully created) do not count.
 * `recently`: as this process read them within RECENT_READS_MS (clicks, which all repeat these reads).
 */
export async function liveLinkBySlug(
  repositories: Repositories,
  programId: string,
  slug: string,
  options: { recently?: boolean } = {},
): Promise<LinkDocument | null> {
  const current = options.recently
    ? await repositories.links.bySlugRecently(programId, slug)
    : await repositories.links.bySlug(programId, slug);
  // A slug no live link has may be a renamed link's previous one, which still leads to it.
  const link = current ?? (await repositories.links.byPreviousSlug(programId, slug, new Date()));
  if (!link) return null;
  const owner = options.recently
    ? await repositories.affiliates.byIdCached(programId, link.affiliateId)
    : await repositories.affiliates.byId(programId, link.affiliateId);
  return owner ? link : null;
}

/** A click that is not a bot's, on a live link, waiting to be counted with the others of its batch. */
export type ClickToCount = {
  linkId: string;
  affiliateId: string;
  /** Who clicked, when repeats of theirs are to be told apart; null: it counts every time. */
  identity: string | null;
  visitorId: string | null;
  at: Date;
  /** Until when a repeat of this identity on this link is a duplicate. */
  until: Date;
  landingUrl: string | null;
  referrer: string | null;
};

export type CountedOrNot = { clickId: number; counted: true } | { clickId: number; counted: false };

/** Clicks of one program are counted in batches (group commit): a batch's writes are shared, and each click is answered once they are stored. */
export type ClickIntake = GroupCommit<ClickToCount, CountedOrNot>;

export function clickIntake(repositories: Repositories): ClickIntake {
  return new GroupCommit((programId, clicks) => countClicks(repositories, programId, clicks), CLICK_BATCHES);
}

/**
 * As many clicks as arrive while a batch is written, up to a batch a command can carry comfortably;
 * two batches of a program in flight, so that one reads while the other writes.
 */
const CLICK_BATCHES = { maxBatch: 256, maxInFlight: 2 };

/**
 * POST /clicks. A bot is answered and forgotten. A click with an identity (the visitor id, else the
 * address and user agent) claims its (link, visitor) pair for the program's deduplication window;
 * a repeat within it gets the first click's id and is not counted. A click without an identity
 * counts every time, as before identities existed.
 */
export async function recordClick(
  repositories: Repositories,
  intake: ClickIntake,
  programId: string,
  input: RecordClickBody,
): Promise<z.infer<typeof Click>> {
  const at = clickTimeOf(input.occurredAt);
  // A click nobody can be told apart in needs no settings: it counts, as before identities existed.
  const identifiable = input.visitorId !== undefined || input.ipAddress !== undefined;
  const [link, settings] = await Promise.all([
    liveLinkBySlug(repositories, programId, input.link, { recently: true }),
    identifiable ? recentProgramSettingsOf(repositories, programId) : null,
  ]);
  if (!link) throw badRequest(`link: no referral link "${input.link}" in this program`, 'resource_missing', 'link');
  const answer = { link: link.link, affiliateId: link.affiliateId };
  if (input.userAgent !== undefined && isbot(input.userAgent)) return { ...answer, clickId: null, counted: false, reason: 'BOT' };

  const clickDedupSeconds = settings?.clickDedupSeconds ?? 0;
  const identity = clickDedupSeconds > 0 ? await identityOf(repositories, programId, input) : null;
  const outcome = await intake.submit(programId, {
    linkId: link._id,
    affiliateId: link.affiliateId,
    identity,
    visitorId: input.visitorId ?? null,
    at,
    until: new Date(at.getTime() + clickDedupSeconds * 1000),
    landingUrl: input.landingUrl ?? null,
    referrer: input.referrer ?? null,
  });
  return outcome.counted
    ? { ...answer, clickId: outcome.clickId, counted: true, reason: null }
    : { ...answer, clickId: outcome.clickId, counted: false, reason: 'DUPLICATE' };
}

/**
 * The rule of recordClick for a batch of one program's clicks, with each write shared by the batch.
 * A repeat of a live claim is a duplicate (one read for the batch); the others get consecutive ids
 * (one counter increment) and claim their pairs (one insert); whoever lost a claim to a simultaneous
 * repeat is a duplicate of the winner; the rest are counted (one insert of the clicks, one write of
 * the visitors). A repeat of the same pair inside the batch waits for the next round, where it meets
 * the claim of the round before: the rule stays that of clicks counted one after the other.
 */
async function countClicks(repositories: Repositories, programId: string, clicks: ClickToCount[]): Promise<CountedOrNot[]> {
  const outcomes: (CountedOrNot | undefined)[] = clicks.map(() => undefined);
  let pending = clicks.map((click, index) => ({ click, index }));
  while (pending.length > 0) {
    const round: typeof pending = [];
    const later: typeof pending = [];
    const pairs = new Set<string>();
    for (const entry of pending) {
      const pair = entry.click.identity === null ? null : `${entry.click.linkId}\n${entry.click.identity}`;
      if (pair !== null && pairs.has(pair)) later.push(entry);
      else {
        if (pair !== null) pairs.add(pair);
        round.push(entry);
      }
    }
    const counted = await countRound(
      repositories,
      programId,
      round.map((entry) => entry.click),
    );
    round.forEach((entry, position) => (outcomes[entry.index] = counted[position]));
    pending = later;
  }
  return outcomes as CountedOrNot[];
}

/** One round of countClicks: no two of its clicks share a (link, identity) pair. */
async function countRound(repositories: Repositories, programId: string, clicks: ClickToCount[]): Promise<CountedOrNot[]> {
  const outcomes: (CountedOrNot | undefined)[] = clicks.map(() => undefined);
  const identified = clicks.flatMap((click, index) => (click.identity === null ? [] : [{ click, index, identity: click.identity }]));
  const holders = await repositories.clickClaims.holders(
    programId,
    identified.map(({ click, identity }) => ({ linkId: click.linkId, identity, at: click.at })),
  );
  const repeats: { click: ClickToCount; clickId: number }[] = [];
  identified.forEach(({ click, index }, position) => {
    const holder = holders[position];
    if (holder === null || holder === undefined) return;
    outcomes[index] = { clickId: holder, counted: false };
    repeats.push({ click, clickId: holder });
  });

  const toCount = clicks.flatMap((click, index) => (outcomes[index] === undefined ? [{ click, index }] : []));
  if (toCount.length === 0) {
    await storeClaimedClicksMissing(repositories, programId, repeats);
    return outcomes as CountedOrNot[];
  }
  const firstId = await repositories.clickCounters.reserve(programId, toCount.length);
  const withIds = toCount.map((entry, position) => ({ ...entry, clickId: firstId + position }));

  const claiming = withIds.flatMap((entry) => (entry.click.identity === null ? [] : [{ ...entry, identity: entry.click.identity }]));
  const claims = await repositories.clickClaims.claimAll(
    programId,
    claiming.map(({ click, identity, clickId }) => ({ linkId: click.linkId, identity, at: click.at, until: click.until, clickId })),
  );
  // A simultaneous repeat claimed first: this click id stays unused, and this click is a repeat of that one.
  claiming.forEach(({ click, index }, position) => {
    const claim = claims[position];
    if (!claim || claim.claimed) return;
    outcomes[index] = { clickId: claim.clickId, counted: false };
    repeats.push({ click, clickId: claim.clickId });
  });

  const winners = withIds.filter((entry) => outcomes[entry.index] === undefined);
  // The repeats' repair beside the winners' writes: one write each, whatever the round holds.
  await Promise.all([storeClaimedClicksMissing(repositories, programId, repeats), storeClicks(repositories, programId, winners)]);
  for (const { index, clickId } of winners) outcomes[index] = { clickId, counted: true };
  return outcomes as CountedOrNot[];
}

/**
 * A repeat's claim whose click was never stored: the process that claimed it died between the two
 * writes (the claim and the click are written one after the other). The repeat stores the click under
 * the claim's id, with its own details (link, landing page, time), unless it is stored already (one
 * insert for the round's repeats, most of them refused as stored), so a click answered, or retried
 * after its answer was lost, is never missing from its link. Stored once whoever comes first; a
 * claimer that was only slow then gives it its own details (`recordClicks`). The visitor's kept
 * clicks get it only when this insert stored it (a slow claimer may add it too: `clicksOf` reads
 * each click once).
 */
async function storeClaimedClicksMissing(
  repositories: Repositories,
  programId: string,
  repeats: { click: ClickToCount; clickId: number }[],
): Promise<void> {
  if (repeats.length === 0) return;
  const landed = await repositories.linkActivity.recordClaimedClicks(programId, repeats.map(activityOf));
  const stored = repeats.filter((_repeat, index) => landed[index]);
  await repositories.visitors.recordClicks(programId, stored.flatMap(visitorClickOf));
}

/** The clicks on their links' activity and in their visitors' kept clicks. */
async function storeClicks(
  repositories: Repositories,
  programId: string,
  clicks: { click: ClickToCount; clickId: number }[],
): Promise<void> {
  if (clicks.length === 0) return;
  await Promise.all([
    repositories.linkActivity.recordClicks(programId, clicks.map(activityOf)),
    repositories.visitors.recordClicks(programId, clicks.flatMap(visitorClickOf)),
  ]);
}

/** A click as its link's activity counts it. */
function activityOf({ click, clickId }: { click: ClickToCount; clickId: number }) {
  return {
    clickId,
    linkId: click.linkId,
    affiliateId: click.affiliateId,
    amountCents: 0,
    removed: false,
    sourceUpdatedAt: click.at,
    landingUrl: click.landingUrl,
    referrer: click.referrer,
    visitorId: click.visitorId,
    createdAt: click.at,
  };
}

/** A click as its visitor keeps it (none without a visitor id). */
function visitorClickOf({ click, clickId }: { click: ClickToCount; clickId: number }) {
  return click.visitorId === null
    ? []
    : [{ visitorId: click.visitorId, clickId, linkId: click.linkId, affiliateId: click.affiliateId, at: click.at }];
}

function clickTimeOf(occurredAt: string | undefined): Date {
  const now = Date.now();
  if (occurredAt === undefined) return new Date(now);
  const at = Date.parse(occurredAt);
  if (at > now + CLOCK_SKEW_MS) throw badRequest('occurredAt: must not be in the future', 'parameter_invalid', 'occurredAt');
  if (at < now - MAX_IMPORT_AGE_MS) throw badRequest('occurredAt: must be at most 90 days ago', 'parameter_invalid', 'occurredAt');
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
  return `hmac:${createHmac('sha256', secret)
    .update(`${input.ipAddress}\n${input.userAgent ?? ''}`)
    .digest('base64url')}`;
}

export async function clickById(repositories: Repositories, programId: string, clickId: number) {
  return repositories.linkActivity.click(programId, clickId);
}

export async function affiliateIdOfClick(repositories: Repositories, programId: string, clickId: number): Promise<string | null> {
  return (await clickById(repositories, programId, clickId))?.affiliateId ?? null;
}
