import {
  shownPayoutDetails,
  type SignupAnswer,
  type Affiliate,
  type AffiliateLink,
  type AffiliateStatus,
  type CommissionTier,
  type FullPayoutDetails,
} from '@affiliate/contracts';
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
import { RECENT_READS_MS } from './links';

export type AffiliateDocument = {
  _id: string;
  programId: string;
  firstName: string;
  lastName: string;
  email: string;
  /** `<programId>:<email lower case>`: a single-field unique key that embeds the program; removal releases it. */
  emailKey: string;
  status: AffiliateStatus;
  commissionRate: number;
  /**
   * The affiliate's first link, where referrals and sales without a link of their own are counted:
   * found by _id per event, instead of by a query over the links. Absent on affiliates stored before
   * it existed, and stale once that link is deleted; both fall back to the query.
   */
  firstLinkId?: string;
  /** The plan assigned to this affiliate; absent or null: the program's default plan. */
  commissionPlanId?: string | null;
  /** The tier reached, and on which plan: a tier of another plan is no tier. */
  commissionTier?: (CommissionTier & { planId: string }) | null;
  payoutDetails?: StoredPayoutDetails | null;
  /** What it answered on the program's sign-up page; absent for affiliates created otherwise. */
  signupAnswers?: SignupAnswer[];
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

export type StoredPayoutDetails = FullPayoutDetails;
export type PlanSummary = { id: string; name: string };

/** What GET /affiliates filters the list by; every filter given must hold. */
export type AffiliateFilters = { status?: AffiliateStatus; createdAt?: Period };

/** What an affiliates CSV row names. */
export type AffiliateRow = Pick<AffiliateDocument, '_id' | 'firstName' | 'lastName' | 'email' | 'status' | 'commissionRate' | 'createdAt'>;

export const emailKeyOf = (programId: string, email: string) => programKey(programId, email.trim().toLowerCase());

const schema = new Schema<AffiliateDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    firstName: { type: String, required: true },
    lastName: { type: String, required: true },
    email: { type: String, required: true },
    emailKey: { type: String, required: true },
    status: { type: String, required: true },
    commissionRate: { type: Number, required: true },
    firstLinkId: { type: String },
    commissionPlanId: { type: String, default: null },
    commissionTier: { type: Schema.Types.Mixed, default: null },
    payoutDetails: { type: Schema.Types.Mixed, default: null },
    signupAnswers: { type: Schema.Types.Mixed, default: undefined },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ emailKey: 1 }, { unique: true });
// The list's order, and the index of a createdAt period (a range on its second field).
schema.index({ programId: 1, createdAt: -1, _id: -1 });
// status=… (the approval queue: PENDING), alone or with a createdAt period, in the list's order.
schema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

/** Exported for the summary test, which seeds more than a thousand affiliates through it instead of the API. */
export const affiliateModel = (connection: Connection): Model<AffiliateDocument> =>
  connection.model<AffiliateDocument>('Affiliate', schema, 'affiliates');

/** The affiliates of each program: by id, by email (its unique key), and as pages of the list. */
export class AffiliateRepository extends AggregateStore<AffiliateDocument> {
  constructor(context: StoreContext) {
    super(context, affiliateModel, { uniqueKeys: ['emailKey'], cacheReadsForMs: RECENT_READS_MS });
  }

  byEmail(programId: string, email: string) {
    return this.byKey(programId, 'emailKey', emailKeyOf(programId, email));
  }

  /** A page of the list, filtered (the approval queue: status PENDING). */
  list(programId: string, filters: AffiliateFilters, page: PageRequest) {
    return this.page(programId, listFilter(filters), page);
  }

  /** Every affiliate the filters let through, newest first, one batch at a time through a cursor: a CSV export. */
  exportRows(programId: string, filters: AffiliateFilters): AsyncGenerator<AffiliateRow> {
    const fields: (keyof AffiliateRow)[] = ['_id', 'firstName', 'lastName', 'email', 'status', 'commissionRate', 'createdAt'];
    return this.stream(programId, listFilter(filters), fields, { sort: { createdAt: -1, _id: -1 } });
  }

  /** How many affiliates are assigned this plan (a list query: it may scan, and plans are deleted rarely). */
  countOnPlan(programId: string, planId: string) {
    return this.count(programId, { commissionPlanId: planId });
  }

  /**
   * Every affiliate of the program with what a report row names (id, name, email) and nothing else,
   * least of all payout details: one batch at a time through a cursor, newest first.
   */
  reportEntries(programId: string) {
    return this.stream(programId, {}, ['_id', 'firstName', 'lastName', 'email'], { sort: { createdAt: -1, _id: -1 } });
  }

  /** The overview's counts (AggregateStore.countsByDay): per status and UTC day of creation within the period. */
  countsByStatusAndDay(programId: string, period: { from: Date; to: Date }) {
    return this.countsByDay<AffiliateStatus>(programId, 'createdAt', period, 'status');
  }
}

function listFilter(filters: AffiliateFilters): FilterQuery<AffiliateDocument> {
  return {
    ...(filters.status === undefined ? {} : { status: filters.status }),
    ...(filters.createdAt === undefined ? {} : { createdAt: withinPeriod(filters.createdAt) }),
  };
}

/**
 * The public shape; codes are the coupon service's, so only affiliate.created names them (as none).
 * `plan` is the plan the affiliate earns by (its own or the default), found by the caller.
 */
export function toAffiliate(affiliate: AffiliateDocument, links: AffiliateLink[], plan: PlanSummary | null): Affiliate {
  const tier = affiliate.commissionTier && plan && affiliate.commissionTier.planId === plan.id ? affiliate.commissionTier : null;
  return {
    id: affiliate._id,
    firstName: affiliate.firstName,
    lastName: affiliate.lastName,
    email: affiliate.email,
    status: affiliate.status,
    commissionRate: affiliate.commissionRate,
    link: null,
    affiliateLinks: links,
    programId: affiliate.programId,
    commissionPlan: plan ? { id: plan.id, name: plan.name } : null,
    commissionTier: tier ? { level: tier.level, metric: tier.metric, threshold: tier.threshold, rate: tier.rate } : null,
    payoutDetails: shownPayoutDetails(affiliate.payoutDetails ?? null),
    signupAnswers: (affiliate.signupAnswers ?? []).map((answer) => ({ ...answer })),
    createdAt: affiliate.createdAt.toISOString(),
    updatedAt: affiliate.updatedAt.toISOString(),
  };
}
