import { randomUUID } from 'node:crypto';
import type { AffiliateLink } from '@affiliate/contracts';
import {
  AggregateStore,
  insertOnce,
  outboxPlugin,
  programKey,
  UniqueKeyConflict,
  withinPeriod,
  type OutboxFields,
  type PageRequest,
  type Period,
  type StoreContext,
} from '@affiliate/platform';
import type { EventEnvelope } from '@affiliate/contracts';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';

/**
 * One document per referral link. Claiming a slug is inserting its document: the unique key makes
 * two simultaneous claims of one slug end with exactly one owner.
 */
export type LinkDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  /** The slug as the integrator spelled it. */
  link: string;
  /** `<programId>:<slug lower case>`: slugs are unique per program regardless of case. Released by removal. */
  linkKey: string;
  /**
   * Set on a previous slug of a renamed link: the id of the link it still leads to. Such a document
   * holds the old slug's key, so the unique index keeps it reserved for its link; every read hides it.
   */
  previousOf?: string | null;
  /** Until when a previous slug keeps leading to its link and stays reserved; null: for ever. */
  reservedUntil?: Date | null;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

/** A previous slug of a link, as the link shows it. */
export type PreviousLink = { link: string; reservedUntil: Date | null };

export const linkKeyOf = (programId: string, slug: string) => programKey(programId, slug.toLowerCase());

export type LinkLookup = { id?: string; link?: string; affiliateId?: string };
/** What the list of links filters by. */
export type LinkFilters = { affiliateId?: string; createdAt?: Period };

const schema = new Schema<LinkDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    link: { type: String, required: true },
    linkKey: { type: String, required: true },
    previousOf: { type: String, default: null },
    reservedUntil: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ linkKey: 1 }, { unique: true });
// An affiliate's links oldest first (the lookup by affiliateId), and, read backwards, the list filtered
// by affiliateId newest first (createdAt then _id, so a page stops at its limit), a period a range on it.
schema.index({ programId: 1, affiliateId: 1, createdAt: 1, _id: 1 });
// The list's order, and the index of its createdAt period (a range on the second field).
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, previousOf: 1 });
schema.plugin(outboxPlugin);

/**
 * How long reads that every click repeats (its link, the link's affiliate, the program's settings)
 * may be served from this process's memory. This process's own writes take effect at once; another
 * replica's rename, deletion or settings change takes effect here within this long.
 */
export const RECENT_READS_MS = 2_000;

const linkModel = (connection: Connection): Model<LinkDocument> => connection.model<LinkDocument>('Link', schema, 'links');

/** An affiliate's links, oldest first: the first one is where unattributed referrals and sales count. */
const OLDEST_FIRST = { createdAt: 1, _id: 1 } as const;

/**
 * The referral links of each program. Claiming a slug is inserting its link: the unique key makes
 * two simultaneous claims of one slug end with exactly one owner.
 */
export class LinkRepository extends AggregateStore<LinkDocument> {
  constructor(context: StoreContext) {
    super(context, linkModel, { uniqueKeys: ['linkKey'], cacheReadsForMs: RECENT_READS_MS, liveWhenNull: ['previousOf'] });
  }

  /**
   * The link a previous slug still leads to (a rename within its reserved period), or null. Only
   * asked when no live link has the slug: a slug taken again leads to its new owner.
   */
  async byPreviousSlug(programId: string, slug: string, now: Date): Promise<LinkDocument | null> {
    const previous = await this.byKey(programId, 'linkKey', linkKeyOf(programId, slug), { evenIfNotLive: true });
    if (!previous?.previousOf || isExpired(previous, now)) return null;
    return this.byId(programId, previous.previousOf);
  }

  /**
   * Keeps the slug a link was renamed from, leading to it and reserved for it until `until`. False
   * when another claim took the slug in the instant between the rename and this write.
   */
  async keepPrevious(link: LinkDocument, until: Date | null, now: Date): Promise<boolean> {
    const previous: LinkDocument = {
      ...link,
      _id: randomUUID(),
      previousOf: link._id,
      reservedUntil: until,
      createdAt: now,
      updatedAt: now,
    };
    delete previous._outbox;
    delete previous._pendingSince;
    return insertOnce(this.model, previous);
  }

  /**
   * Frees a slug held as a previous slug when it may be taken: its period is over, or the link it
   * leads to is the one taking it back (a rename back). True when it was freed.
   */
  async releasePrevious(programId: string, slug: string, takenBy: string | null, now: Date): Promise<boolean> {
    const previous = await this.byKey(programId, 'linkKey', linkKeyOf(programId, slug), { evenIfNotLive: true });
    if (!previous?.previousOf || (previous.previousOf !== takenBy && !isExpired(previous, now))) return false;
    const removed = await this.model.deleteOne({ _id: previous._id, programId, linkKey: previous.linkKey });
    return removed.deletedCount === 1;
  }

  /** The previous slugs of these links still leading to them, oldest first. */
  async previousOf(programId: string, linkIds: string[], now: Date): Promise<Map<string, PreviousLink[]>> {
    const byLink = new Map<string, PreviousLink[]>();
    if (linkIds.length === 0) return byLink;
    const found = await this.model
      .find({ programId, previousOf: { $in: linkIds } })
      .sort(OLDEST_FIRST)
      .lean<LinkDocument[]>();
    for (const previous of found) {
      if (isExpired(previous, now) || !previous.previousOf) continue;
      byLink.set(previous.previousOf, [
        ...(byLink.get(previous.previousOf) ?? []),
        { link: previous.link, reservedUntil: previous.reservedUntil ?? null },
      ]);
    }
    return byLink;
  }

  /** A removed link's previous slugs go with it. */
  async dropPreviousOf(programId: string, linkId: string): Promise<void> {
    await this.model.deleteMany({ programId, previousOf: linkId });
  }

  bySlug(programId: string, slug: string) {
    return this.byKey(programId, 'linkKey', linkKeyOf(programId, slug));
  }

  /** `bySlug` for clicks: possibly as read up to RECENT_READS_MS ago (another process may have renamed or removed it since). */
  bySlugRecently(programId: string, slug: string) {
    return this.byKeyCached(programId, 'linkKey', linkKeyOf(programId, slug));
  }

  /** Inserts the link with its events; null when another link of the program has that slug (any case). */
  async claim(link: LinkDocument, events: (link: LinkDocument) => EventEnvelope[]): Promise<LinkDocument | null> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.insert(link, events);
      } catch (error) {
        if (!(error instanceof UniqueKeyConflict)) throw error;
        // A previous slug past its period is free: taking it ends its redirect.
        if (attempt > 1 || !(await this.releasePrevious(link.programId, link.link, null, new Date()))) return null;
      }
    }
  }

  /** The links of these affiliates, oldest first. */
  ofAffiliates(programId: string, affiliateIds: string[]) {
    return this.all(programId, { affiliateId: { $in: affiliateIds } }, OLDEST_FIRST);
  }

  /** The links matching every identifier given, oldest first. */
  lookUp(programId: string, lookup: LinkLookup) {
    const filter: FilterQuery<LinkDocument> = {};
    if (lookup.id !== undefined) filter._id = lookup.id;
    if (lookup.link !== undefined) filter.linkKey = linkKeyOf(programId, lookup.link);
    if (lookup.affiliateId !== undefined) filter.affiliateId = lookup.affiliateId;
    return this.all(programId, filter, OLDEST_FIRST);
  }

  async firstOf(programId: string, affiliateId: string): Promise<LinkDocument | null> {
    return (await this.ofAffiliates(programId, [affiliateId]))[0] ?? null;
  }

  countOf(programId: string, affiliateId: string) {
    return this.count(programId, { affiliateId });
  }

  /** A page of the links, of the affiliate and created within the period when they are given. */
  list(programId: string, filters: LinkFilters, page: PageRequest) {
    const filter: FilterQuery<LinkDocument> = {};
    if (filters.affiliateId !== undefined) filter.affiliateId = filters.affiliateId;
    if (filters.createdAt !== undefined) filter.createdAt = withinPeriod(filters.createdAt);
    return this.page(programId, filter, page);
  }

  /** A link claimed for an affiliate whose own write then failed: nobody ever saw it. */
  discardUnannounced(programId: string, linkId: string) {
    return this.discard(programId, { _id: linkId });
  }

  /** The links of a removed affiliate, whose affiliate.deleted announces their going. */
  async discardOfAffiliate(programId: string, affiliateId: string) {
    await this.discard(programId, { affiliateId });
    await this.model.deleteMany({ programId, affiliateId, previousOf: { $ne: null } });
  }
}

const isExpired = (previous: Pick<LinkDocument, 'reservedUntil'>, now: Date) =>
  previous.reservedUntil != null && previous.reservedUntil <= now;

export function toAffiliateLink(link: LinkDocument): AffiliateLink {
  return {
    id: link._id,
    link: link.link,
    userId: link.affiliateId,
    programId: link.programId,
    createdAt: link.createdAt.toISOString(),
    updatedAt: link.updatedAt.toISOString(),
  };
}
