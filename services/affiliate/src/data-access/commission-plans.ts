import type { CommissionPlan, CommissionTierRule } from '@affiliate/contracts';
import {
  AggregateStore,
  outboxPlugin,
  unlessKeyTaken,
  UniqueKeyConflict,
  type OutboxFields,
  type PageRequest,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';

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
    super(context, planModel);
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

  constructor(context: { connection: Connection }) {
    this.model = defaultModel(context.connection);
  }

  async of(programId: string): Promise<string | null> {
    return (await this.model.findOne({ _id: programId }).lean())?.planId ?? null;
  }

  async set(programId: string, planId: string): Promise<void> {
    const written = await unlessKeyTaken(() => this.model.updateOne({ _id: programId }, { $set: { planId } }, { upsert: true }));
    // Two first defaults of a program raced to create the document: the loser overwrites the winner.
    if (written instanceof UniqueKeyConflict) await this.model.updateOne({ _id: programId }, { $set: { planId } });
  }

  /** Clears the default only if it is still this plan (another plan may have become the default meanwhile). */
  async clearIf(programId: string, planId: string): Promise<void> {
    await this.model.updateOne({ _id: programId, planId }, { $set: { planId: null } });
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
