import { NO_RISK, type AttributionReason, type Referral, type Risk } from '@affiliate/contracts';
import {
  AggregateStore,
  outboxPlugin,
  programKey,
  withinPeriod,
  type OutboxFields,
  type PageRequest,
  type Period,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type FilterQuery, type Model } from 'mongoose';

export type ReferralDocument = {
  _id: string;
  programId: string;
  affiliateId: string;
  linkId: string | null;
  clickId: number | null;
  email: string;
  /**
   * `<programId>:<email lower case>`: one referral per (program, email), a single-field unique key
   * that embeds the program (see AggregateStore); removal releases it.
   */
  emailKey: string;
  name: string | null;
  referredUserExternalId: string | null;
  plan: string | null;
  status: Referral['status'];
  /** How the referral was attributed; absent on referrals stored before it was recorded. */
  attribution?: AttributionReason | null;
  /** The risk signals found when it was made; absent on referrals stored before they were looked for. */
  risk?: Risk;
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export const emailKeyOf = (programId: string, email: string): string => programKey(programId, email.trim().toLowerCase());

export type ReferralFilters = {
  email?: string;
  affiliateId?: string;
  referredUserExternalId?: string;
  status?: Referral['status'];
  createdAt?: Period;
};

const schema = new Schema<ReferralDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    affiliateId: { type: String, required: true },
    linkId: { type: String, default: null },
    clickId: { type: Number, default: null },
    email: { type: String, required: true },
    emailKey: { type: String, required: true },
    name: { type: String, default: null },
    referredUserExternalId: { type: String, default: null },
    plan: { type: String, default: null },
    status: { type: String, required: true },
    attribution: { type: Schema.Types.Mixed, default: null },
    risk: { type: Schema.Types.Mixed },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ emailKey: 1 }, { unique: true });
// Which index serves which filter of the list (each with the program first, and ending in the list's
// order, createdAt then _id, so a page is read in order and stops at its limit; a createdAt period is
// a range on the createdAt that follows): none or createdAt alone, the first; affiliateId, the second;
// referredUserExternalId, the third; status, the fourth (with affiliateId too, the second, status then
// filtering what it reads); email, the unique emailKey (a point lookup).
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, affiliateId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, referredUserExternalId: 1, createdAt: -1, _id: -1 });
schema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

/** Exported for the summary test, which seeds more than a thousand referrals through it instead of the API. */
export const referralModel = (connection: Connection): Model<ReferralDocument> =>
  connection.model<ReferralDocument>('Referral', schema, 'referrals');

/** The referrals of each program: by id, by email (its unique key), and as pages of a list. */
export class ReferralRepository extends AggregateStore<ReferralDocument> {
  constructor(context: StoreContext) {
    super(context, referralModel, { uniqueKeys: ['emailKey'] });
  }

  byEmail(programId: string, email: string) {
    return this.byKey(programId, 'emailKey', emailKeyOf(programId, email));
  }

  /** Referrals matching every filter given (none: the whole program), newest first. */
  list(programId: string, filters: ReferralFilters, page: PageRequest) {
    return this.page(programId, listFilter(programId, filters), page);
  }

  /** Every referral the filters let through, newest first, one batch at a time through a cursor: a CSV export. */
  exportRows(programId: string, filters: ReferralFilters): AsyncGenerator<ReferralDocument> {
    const fields: (keyof ReferralDocument)[] = [
      '_id',
      'affiliateId',
      'linkId',
      'email',
      'name',
      'referredUserExternalId',
      'plan',
      'status',
      'createdAt',
    ];
    return this.stream(programId, listFilter(programId, filters), fields, { sort: { createdAt: -1, _id: -1 } });
  }

  /** The overview's counts (AggregateStore.countsByDay): every referral, per UTC day of creation within the period. */
  countsPerDay(programId: string, period: { from: Date; to: Date }) {
    return this.countsByDay<never>(programId, 'createdAt', period);
  }
}

function listFilter(programId: string, filters: ReferralFilters): FilterQuery<ReferralDocument> {
  const filter: FilterQuery<ReferralDocument> = {};
  if (filters.email !== undefined) filter.emailKey = emailKeyOf(programId, filters.email);
  if (filters.affiliateId !== undefined) filter.affiliateId = filters.affiliateId;
  if (filters.referredUserExternalId !== undefined) filter.referredUserExternalId = filters.referredUserExternalId;
  if (filters.status !== undefined) filter.status = filters.status;
  if (filters.createdAt !== undefined) filter.createdAt = withinPeriod(filters.createdAt);
  return filter;
}

export function toReferral(referral: ReferralDocument): Referral {
  return {
    id: referral._id,
    affiliateId: referral.affiliateId,
    linkId: referral.linkId,
    clickId: referral.clickId,
    email: referral.email,
    name: referral.name,
    referredUserExternalId: referral.referredUserExternalId,
    plan: referral.plan,
    status: referral.status,
    attribution: referral.attribution ?? null,
    risk: referral.risk ?? NO_RISK,
    programId: referral.programId,
    createdAt: referral.createdAt.toISOString(),
    updatedAt: referral.updatedAt.toISOString(),
  };
}
