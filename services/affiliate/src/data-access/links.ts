import type { AffiliateLink } from '@affiliate/contracts';
import { AggregateStore, outboxPlugin, programKey, UniqueKeyConflict, type OutboxFields, type PageRequest, type StoreContext } from '@affiliate/platform';
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
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export const linkKeyOf = (programId: string, slug: string) => programKey(programId, slug.toLowerCase());

export type LinkLookup = { id?: string; link?: string; affiliateId?: string };

const schema = new Schema<LinkDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    link: { type: String, required: true },
    linkKey: { type: String, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ linkKey: 1 }, { unique: true });
schema.index({ programId: 1, affiliateId: 1, createdAt: 1 });
schema.index({ programId: 1, createdAt: -1, _id: -1 });
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
    super(context, linkModel, { uniqueKeys: ['linkKey'], cacheReadsForMs: RECENT_READS_MS });
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
    try {
      return await this.insert(link, events);
    } catch (error) {
      if (error instanceof UniqueKeyConflict) return null;
      throw error;
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

  list(programId: string, page: PageRequest) {
    return this.page(programId, {}, page);
  }

  /** A link claimed for an affiliate whose own write then failed: nobody ever saw it. */
  discardUnannounced(programId: string, linkId: string) {
    return this.discard(programId, { _id: linkId });
  }

  /** The links of a removed affiliate, whose affiliate.deleted announces their going. */
  discardOfAffiliate(programId: string, affiliateId: string) {
    return this.discard(programId, { affiliateId });
  }
}

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
