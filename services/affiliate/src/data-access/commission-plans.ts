import type { CommissionPlan, CommissionTierRule } from '@affiliate/contracts';
import {
  AggregateStore,
  outboxPlugin,
  RecentReads,
  unlessKeyTaken,
  UniqueKeyConflict,
  type OutboxFields,
  type PageRequest,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import { RECENT_READS_MS } from './links';

/**
 * A commission plan of a program. The numbers are the API's: `rate` is a percentage (PERCENTAGE) or
 * an amount in `currency` (FLAT), turned into minor units by the sale service, which rounds once when
 * it computes a commission. Plans carry no public events (the specification has none for them).
 */
export type CommissionPlanDocument = {
  _id: string;
  programId: string;
  name: string;
  commissionType: CommissionPlan['commissionType'];
  rate: number;
  currency: string | null;
  firstPaymentRate: number | null;
  recurring: CommissionPlan['recurring'];
  recurringMonths: number | null;
  holdDays: number;
  minimumPayout: number | null;
  tiers: CommissionTierRule[];
  createdAt: Date;
  updatedAt: Date;
} & Partial<OutboxFields>;

const schema = new Schema<CommissionPlanDocument>(
  {
    _id: { type: String, required: true },
    programId: { type: String, required: true },
    name: { type: String, required: true },
    commissionType: { type: String, required: true },
    rate: { type: Number, required: true },
    currency: { type: String, default: null },
    firstPaymentRate: { type: Number, default: null },
    recurring: { type: String, required: true },
    recurringMonths: { type: Number, default: null },
    holdDays: { type: Number, required: true },
    minimumPayout: { type: Number, default: null },
    tiers: { type: Schema.Types.Mixed, default: [] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ programId: 1, createdAt: -1, _id: -1 });
schema.plugin(outboxPlugin);

const planModel = (connection: Connection): Model<CommissionPlanDocument> =>
  connection.model<CommissionPlanDocument>('CommissionPlan', schema, 'commission_plans');

export class CommissionPlanRepository extends AggregateStore<CommissionPlanDocument> {
  constructor(context: StoreContext) {
    // Recent reads: every sale asks for its affiliate's plan (byIdCached).
    super(context, planModel, { cacheReadsForMs: RECENT_READS_MS });
  }

  list(programId: string, page: PageRequest) {
    return this.page(programId, {}, page);
  }
}

/** Which plan is a program's default: one document per program, so there is never more than one. */
type DefaultPlanDocument = { _id: string; planId: string | null };

const defaultSchema = new Schema<DefaultPlanDocument>(
  { _id: { type: String, required: true }, planId: { type: String, default: null } },
  { versionKey: false },
);
const defaultModel = (connection: Connection): Model<DefaultPlanDocument> =>
  connection.model<DefaultPlanDocument>('DefaultCommissionPlan', defaultSchema, 'default_commission_plans');

export class DefaultPlanRepository {
  private readonly model: Model<DefaultPlanDocument>;
  /** The default as read for sales, forgotten on this process's own changes of it (RECENT_READS_MS); "none" is kept too. */
  private readonly recent = new RecentReads<{ planId: string | null }>({ ttlMs: RECENT_READS_MS, maxEntries: 10_000 });

  constructor(context: { connection: Connection }) {
    this.model = defaultModel(context.connection);
  }

  async of(programId: string): Promise<string | null> {
    return (await this.model.findOne({ _id: programId }).lean())?.planId ?? null;
  }

  /** `of` for sales: possibly as read up to RECENT_READS_MS ago (another replica may have changed the default since). */
  async recentlyOf(programId: string): Promise<string | null> {
    return (await this.recent.get(programId, 'default', async () => ({ planId: await this.of(programId) })))?.planId ?? null;
  }

  async set(programId: string, planId: string): Promise<void> {
    try {
      const written = await unlessKeyTaken(() => this.model.updateOne({ _id: programId }, { $set: { planId } }, { upsert: true }));
      // Two first defaults of a program raced to create the document: the loser overwrites the winner.
      if (written instanceof UniqueKeyConflict) await this.model.updateOne({ _id: programId }, { $set: { planId } });
    } finally {
      this.recent.forget(programId);
    }
  }

  /** Clears the default only if it is still this plan (another plan may have become the default meanwhile). */
  async clearIf(programId: string, planId: string): Promise<void> {
    try {
      await this.model.updateOne({ _id: programId, planId }, { $set: { planId: null } });
    } finally {
      this.recent.forget(programId);
    }
  }
}

export function toCommissionPlan(plan: CommissionPlanDocument, defaultPlanId: string | null): CommissionPlan {
  return {
    id: plan._id,
    name: plan.name,
    commissionType: plan.commissionType,
    rate: plan.rate,
    currency: plan.currency,
    firstPaymentRate: plan.firstPaymentRate,
    recurring: plan.recurring,
    recurringMonths: plan.recurringMonths,
    holdDays: plan.holdDays,
    minimumPayout: plan.minimumPayout,
    tiers: plan.tiers,
    isDefault: plan._id === defaultPlanId,
    programId: plan.programId,
    createdAt: plan.createdAt.toISOString(),
    updatedAt: plan.updatedAt.toISOString(),
  };
}
