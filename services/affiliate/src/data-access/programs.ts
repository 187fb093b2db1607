import { riskSettingsOf, TRACKING_DEFAULTS, type AttributionModel, type ProgramEventData, type RiskSettings } from '@affiliate/contracts';
import type { z } from 'zod';
import { ignoringDuplicateKey, RecentReads } from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import { RECENT_READS_MS } from './links';

/** The program settings this service needs, projected from the gateway's program.* events. */
export type ProgramSettings = {
  urlModifier: string;
  destinationUrls: { url: string; params: Record<string, string> }[];
  requireApproval: boolean;
  defaultCommissionRate: number;
  /** Days a click can still be credited; null: never expires. */
  attributionWindowDays: number | null;
  attributionModel: AttributionModel;
  /** A repeat click of one visitor on one link within this many seconds is not counted; 0: off. */
  clickDedupSeconds: number;
  /** What the risk signals of referrals and sales do (README, "Fraud review"), handed to the referral and sale services with each attribution. */
  risk: RiskSettings;
  /** The currency of a link's totalRevenue; the other currencies only appear per currency. */
  reportingCurrency: string;
};

/** A program as program.* events announce it; those from before the tracking settings lack them. */
export type ProgramAnnouncement = z.infer<typeof ProgramEventData>;

export type ProgramDocument = ProgramSettings & {
  _id: string;
  /** updatedAt of the program as last applied: an older event arriving late is ignored. */
  sourceUpdatedAt: Date;
  deleted: boolean;
};

export const DEFAULT_PROGRAM_SETTINGS: ProgramSettings = {
  urlModifier: 'ref',
  destinationUrls: [],
  requireApproval: false,
  defaultCommissionRate: 20,
  attributionWindowDays: TRACKING_DEFAULTS.attributionWindowDays,
  attributionModel: TRACKING_DEFAULTS.attributionModel,
  clickDedupSeconds: TRACKING_DEFAULTS.clickDedupSeconds,
  risk: { ...riskSettingsOf({}), reportingCurrency: TRACKING_DEFAULTS.reportingCurrency },
  reportingCurrency: TRACKING_DEFAULTS.reportingCurrency,
};

const schema = new Schema<ProgramDocument>(
  {
    _id: { type: String, required: true },
    urlModifier: { type: String, required: true },
    destinationUrls: { type: Schema.Types.Mixed, default: [] },
    requireApproval: { type: Boolean, required: true },
    defaultCommissionRate: { type: Number, required: true },
    // Absent on documents projected before the tracking settings existed: read as the defaults.
    attributionWindowDays: { type: Number, default: null },
    attributionModel: { type: String },
    clickDedupSeconds: { type: Number },
    // Absent on documents projected before the risk settings existed: read as the defaults.
    risk: { type: Schema.Types.Mixed },
    reportingCurrency: { type: String },
    sourceUpdatedAt: { type: Date, required: true },
    deleted: { type: Boolean, default: false },
  },
  { versionKey: false },
);

const programModel = (connection: Connection): Model<ProgramDocument> => connection.model<ProgramDocument>('Program', schema, 'programs');

/** The settings of each program, projected from the gateway's program.* events (the program is the key). */
export class ProgramSettingsRepository {
  private readonly model: Model<ProgramDocument>;
  /** Settings read for clicks, forgotten when this process applies a program event (RECENT_READS_MS). */
  private readonly recent = new RecentReads<ProgramSettings>({ ttlMs: RECENT_READS_MS, maxEntries: 10_000 });

  constructor(context: { connection: Connection }) {
    this.model = programModel(context.connection);
  }

  /** `of` for clicks: possibly as read up to RECENT_READS_MS ago (another replica may have applied a newer program event since). */
  recentlyOf(programId: string): Promise<ProgramSettings | null> {
    return this.recent.get(programId, 'settings', () => this.of(programId));
  }

  async of(programId: string): Promise<ProgramSettings | null> {
    // By _id alone (a point read on every click); the tombstone is checked on the document.
    const program = await this.model.findOne({ _id: programId }).lean();
    if (!program || program.deleted) return null;
    const { urlModifier, destinationUrls, requireApproval, defaultCommissionRate } = program;
    const tracking = trackingOf(program);
    // The limit of OVER_AUTO_APPROVAL_LIMIT is in the reporting currency: the services compare it with commissions in that currency only.
    return {
      urlModifier,
      destinationUrls,
      requireApproval,
      defaultCommissionRate,
      ...tracking,
      risk: { ...riskSettingsOf(program.risk ?? {}), reportingCurrency: tracking.reportingCurrency },
    };
  }

  /**
   * The write only lands when the program is newer than what is stored; an older one fails the
   * filter, its upsert hits the unique _id, and is dropped.
   */
  async record(program: ProgramAnnouncement): Promise<void> {
    const updatedAt = new Date(program.updatedAt);
    const { urlModifier, destinationUrls, requireApproval, defaultCommissionRate } = program;
    const settings = {
      urlModifier,
      destinationUrls,
      requireApproval,
      defaultCommissionRate,
      ...trackingOf(program),
      risk: riskSettingsOf(program),
    };
    try {
      await ignoringDuplicateKey(
        this.model.updateOne(
          { _id: program.id, sourceUpdatedAt: { $lt: updatedAt } },
          { $set: { ...settings, sourceUpdatedAt: updatedAt, deleted: false } },
          { upsert: true },
        ),
      );
    } finally {
      this.recent.forget(program.id);
    }
  }

  /** A deleted program stays as a marker dated in the far future, so no late update revives it. */
  async forget(programId: string): Promise<void> {
    try {
      await this.model.updateOne(
        { _id: programId },
        { $set: { deleted: true, sourceUpdatedAt: new Date(8.64e15) }, $setOnInsert: { ...DEFAULT_PROGRAM_SETTINGS } },
        { upsert: true },
      );
    } finally {
      this.recent.forget(programId);
    }
  }
}

function trackingOf(
  source: Partial<Pick<ProgramSettings, 'attributionWindowDays' | 'attributionModel' | 'clickDedupSeconds' | 'reportingCurrency'>>,
) {
  return {
    attributionWindowDays: source.attributionWindowDays ?? DEFAULT_PROGRAM_SETTINGS.attributionWindowDays,
    attributionModel: source.attributionModel ?? DEFAULT_PROGRAM_SETTINGS.attributionModel,
    clickDedupSeconds: source.clickDedupSeconds ?? DEFAULT_PROGRAM_SETTINGS.clickDedupSeconds,
    reportingCurrency: source.reportingCurrency ?? DEFAULT_PROGRAM_SETTINGS.reportingCurrency,
  };
}
