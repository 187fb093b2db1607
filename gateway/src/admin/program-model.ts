import { randomUUID } from 'node:crypto';
import {
  PORTAL_DEFAULTS,
  PROGRAM_LIMIT_DEFAULTS,
  riskSettingsOf,
  TRACKING_DEFAULTS,
  type AttributionModel,
  type Program,
  type RiskActions,
  type SignupSettings,
} from '@affiliate/contracts';
import {
  AggregateStore,
  findPage,
  outboxPlugin,
  runMigrationOnce,
  type OutboxFields,
  type PageRequest,
  type StoreContext,
} from '@affiliate/platform';
import { Schema, type Connection, type Model } from 'mongoose';
import type { RateLimit } from '../config';

export type ProgramDocument = {
  _id: string;
  name: string;
  urlModifier: string;
  destinationUrls: { url: string; params: Record<string, string> }[];
  requireApproval: boolean;
  defaultCommissionRate: number;
  apiAccess: boolean;
  rateLimit: RateLimit | null;
  // Tracking settings: absent on programs created before they existed, which read as the defaults.
  allowedOrigins?: string[];
  attributionWindowDays?: number | null;
  attributionModel?: AttributionModel;
  clickDedupSeconds?: number;
  /** Absent on programs created before it existed: USD. */
  reportingCurrency?: string;
  /** The operator's cap on the program's webhook endpoints; absent: the default. */
  maxWebhookEndpoints?: number;
  // Risk settings: absent (or some signals absent) read as FLAG everywhere, no limit, no minimum.
  riskActions?: Partial<RiskActions>;
  maxAutoApprovedCommission?: number | null;
  minClickToConversionSeconds?: number | null;
  // Affiliate portal settings: absent reads as PORTAL_DEFAULTS.
  affiliateCouponIds?: string[];
  affiliatesMayAddLinks?: boolean;
  /** The sign-up page's public name; absent or null: none. */
  slug?: string | null;
  /**
   * `slug:<slug>`, or `none:<program id>` without one: a single-field unique key across programs (the
   * slug is what finds the program, so it cannot embed it), never absent, so no sparse index is needed.
   */
  slugKey?: string;
  signup?: SignupSettings;
  createdAt: Date;
  updatedAt: Date;
} & OutboxFields;

const programSchema = new Schema<ProgramDocument>(
  {
    _id: { type: String, default: randomUUID },
    name: { type: String, required: true },
    urlModifier: { type: String, required: true },
    destinationUrls: { type: [{ _id: false, url: String, params: { type: Schema.Types.Mixed, default: {} } }], default: [] },
    requireApproval: { type: Boolean, required: true },
    defaultCommissionRate: { type: Number, required: true },
    apiAccess: { type: Boolean, required: true },
    rateLimit: { type: new Schema({ points: Number, duration: Number }, { _id: false }), default: null },
    allowedOrigins: { type: [String], default: undefined },
    attributionWindowDays: { type: Number, default: undefined },
    attributionModel: { type: String, default: undefined },
    clickDedupSeconds: { type: Number, default: undefined },
    reportingCurrency: { type: String, default: undefined },
    maxWebhookEndpoints: { type: Number, default: undefined },
    riskActions: { type: Schema.Types.Mixed, default: undefined },
    maxAutoApprovedCommission: { type: Number, default: undefined },
    minClickToConversionSeconds: { type: Number, default: undefined },
    affiliateCouponIds: { type: [String], default: undefined },
    affiliatesMayAddLinks: { type: Boolean, default: undefined },
    slug: { type: String, default: undefined },
    slugKey: { type: String, default: undefined },
    signup: { type: Schema.Types.Mixed, default: undefined },
    // Set by the use cases rather than by mongoose, so an event carries exactly the stored times.
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'programs', versionKey: false, minimize: false },
);
programSchema.plugin(outboxPlugin);
programSchema.index({ createdAt: -1, _id: -1 });
// Always present (the local server honours no sparse index): programs stored before slugs get theirs from migrateSlugKeys.
programSchema.index({ slugKey: 1 }, { unique: true });

const SLUG_KEY_MIGRATION = 'program-slug-keys';

/**
 * Programs stored before slugs existed have no slugKey; the unique index would count them all as one
 * "absent" value. Each gets its placeholder once, before the indexes are built (replicas starting
 * together may both run it: it only sets what is still missing).
 */
export function migrateSlugKeys(connection: Connection): Promise<void> {
  return runMigrationOnce(connection, SLUG_KEY_MIGRATION, async () => {
    const programs = connection.collection<{ _id: string; slugKey?: string }>('programs');
    for await (const program of programs.find({ slugKey: { $exists: false } }, { projection: { _id: 1 } })) {
      await programs.updateOne({ _id: program._id, slugKey: { $exists: false } }, { $set: { slugKey: slugKeyOf(program._id, null) } });
    }
  });
}

export const slugKeyOf = (programId: string, slug: string | null | undefined): string => (slug ? `slug:${slug}` : `none:${programId}`);

const programModel = (connection: Connection): Model<ProgramDocument> =>
  (connection.models.Program as Model<ProgramDocument> | undefined) ?? connection.model<ProgramDocument>('Program', programSchema);

/** The programs: each is its own scope, so its id is also the program every method takes. */
export class ProgramRepository extends AggregateStore<ProgramDocument> {
  constructor(context: StoreContext) {
    super(context, programModel, { programField: '_id', uniqueKeys: ['slugKey'] });
  }

  /** The live program whose sign-up page is /join/{slug}: a point lookup on the unique key, across programs (the slug is all a visitor has). */
  async bySlug(slug: string): Promise<ProgramDocument | null> {
    const found = (await this.model.collection.findOne({ slugKey: slugKeyOf('', slug) })) as ProgramDocument | null;
    return found && (found.deletedAt ?? null) === null ? found : null;
  }

  /**
   * Every origin some live program allows: what a CORS preflight, which carries no key, may be
   * answered for. A read across programs (a scan locally), made on a timer, never per request.
   */
  async allowedOriginsAcrossPrograms(): Promise<string[]> {
    const programs = await this.model.find({ allowedOrigins: { $exists: true } }, { allowedOrigins: 1, deletedAt: 1 }).lean();
    return programs.filter((program) => (program.deletedAt ?? null) === null).flatMap((program) => program.allowedOrigins ?? []);
  }

  /** Every program, newest first: the operator's list, the one read across programs. */
  listAcrossPrograms(page: PageRequest) {
    return findPage(this.model, {}, page);
  }
}

/** The contract shape, which is also the payload of program.created / program.updated. */
export function toProgram(document: ProgramDocument): Program {
  return {
    id: document._id,
    name: document.name,
    urlModifier: document.urlModifier,
    destinationUrls: document.destinationUrls.map((destination) => ({ url: destination.url, params: { ...destination.params } })),
    requireApproval: document.requireApproval,
    defaultCommissionRate: document.defaultCommissionRate,
    apiAccess: document.apiAccess,
    rateLimit: document.rateLimit ? { points: document.rateLimit.points, duration: document.rateLimit.duration } : null,
    allowedOrigins: [...(document.allowedOrigins ?? TRACKING_DEFAULTS.allowedOrigins)],
    attributionWindowDays: document.attributionWindowDays ?? TRACKING_DEFAULTS.attributionWindowDays,
    attributionModel: document.attributionModel ?? TRACKING_DEFAULTS.attributionModel,
    clickDedupSeconds: document.clickDedupSeconds ?? TRACKING_DEFAULTS.clickDedupSeconds,
    reportingCurrency: document.reportingCurrency ?? TRACKING_DEFAULTS.reportingCurrency,
    maxWebhookEndpoints: document.maxWebhookEndpoints ?? PROGRAM_LIMIT_DEFAULTS.maxWebhookEndpoints,
    // Shown once set (a program created before them, or without them, keeps the shape it had): absent reads as the defaults.
    ...(hasRiskSettings(document) ? riskSettingsOf(document) : {}),
    // The same for the portal settings: shown once set, absent reads as PORTAL_DEFAULTS.
    ...(hasPortalSettings(document) ? portalSettingsOf(document) : {}),
    ...(document.slug !== undefined ? { slug: document.slug } : {}),
    ...(document.signup !== undefined ? { signup: structuredClone(document.signup) } : {}),
    createdAt: new Date(document.createdAt).toISOString(),
    updatedAt: new Date(document.updatedAt).toISOString(),
  };
}

const hasPortalSettings = (document: ProgramDocument): boolean =>
  document.affiliateCouponIds !== undefined || document.affiliatesMayAddLinks !== undefined;

/** The portal settings of a program, the defaults filling what it never set. */
export const portalSettingsOf = (document: Pick<ProgramDocument, 'affiliateCouponIds' | 'affiliatesMayAddLinks'>) => ({
  affiliateCouponIds: [...(document.affiliateCouponIds ?? PORTAL_DEFAULTS.affiliateCouponIds)],
  affiliatesMayAddLinks: document.affiliatesMayAddLinks ?? PORTAL_DEFAULTS.affiliatesMayAddLinks,
});

const hasRiskSettings = (document: ProgramDocument): boolean =>
  document.riskActions !== undefined ||
  document.maxAutoApprovedCommission !== undefined ||
  document.minClickToConversionSeconds !== undefined;
