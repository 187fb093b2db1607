import { Currency, DateTime, ShortText, Uuid } from './common';
import { RiskActions, RiskActionsBody } from './risk';
import { ProgramSlug, SignupSettings } from './signup';
import { z } from './zod';

export const DestinationUrl = z
  .object({
    url: z.string().url().max(2000).refine((url) => /^https?:\/\//i.test(url), 'must be an http or https URL'),
    params: z.record(z.string().min(1).max(100), z.string().max(500)).default({}),
  })
  .strict();

export const RateLimitSetting = z
  .object({
    points: z.number().int().min(1).max(1_000_000),
    duration: z.number().int().min(1).max(86_400),
  })
  .strict()
  .openapi('RateLimitSetting', { description: 'Requests allowed per duration (seconds) for each key, route and method.' });

/** How a visitor's clicks decide whom a referral by visitor belongs to (DESIGN.md §12). */
export const AttributionModel = z
  .enum(['FIRST_CLICK', 'LAST_CLICK'])
  .openapi('AttributionModel', { description: "FIRST_CLICK: the visitor's earliest click within the attribution window; LAST_CLICK: the latest" });

/** An exact browser origin (scheme, host and port only), as the Origin header sends it. */
export const Origin = z
  .string()
  .max(200)
  .refine(isExactOrigin, 'must be an exact origin such as https://shop.example.com (scheme, host and optional port; no path, no trailing slash)');

function isExactOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** What the operator may change per program beyond the tracking settings: the cap on its webhook endpoints. */
export const PROGRAM_LIMIT_DEFAULTS = { maxWebhookEndpoints: 20 };
/** The highest endpoint cap an operator can set, and the highest deliveries per event the dispatcher can be set to. */
export const MAX_WEBHOOK_ENDPOINTS_CEILING = 100;

/** Defaults of the tracking settings: today's behaviour (clicks never expire, first click wins), hour-long click deduplication. */
export const TRACKING_DEFAULTS = {
  allowedOrigins: [] as string[],
  attributionWindowDays: null as number | null,
  attributionModel: 'FIRST_CLICK' as 'FIRST_CLICK' | 'LAST_CLICK',
  clickDedupSeconds: 3600,
  /** The currency the single-number totals (a link's totalRevenue) count; other currencies are only in the …ByCurrency objects. */
  reportingCurrency: 'USD',
};

/** Defaults of the affiliate portal settings (issue 30): no coupon offered to affiliates, links added by the program only. */
export const PORTAL_DEFAULTS = {
  affiliateCouponIds: [] as string[],
  affiliatesMayAddLinks: false,
};

/** How many coupons a program can offer its affiliates for their own codes: a choice in the portal, not a catalogue. */
export const MAX_AFFILIATE_COUPONS = 20;

export const Program = z
  .object({
    id: Uuid,
    name: z.string(),
    urlModifier: z.string(),
    destinationUrls: z.array(z.object({ url: z.string(), params: z.record(z.string()) })),
    requireApproval: z.boolean(),
    defaultCommissionRate: z.number(),
    apiAccess: z.boolean(),
    rateLimit: RateLimitSetting.nullable(),
    allowedOrigins: z.array(z.string()).openapi({ description: 'Browser origins allowed to use the publishable keys (CORS); empty: no browser access' }),
    attributionWindowDays: z.number().int().nullable().openapi({ description: 'Days a click can still be credited; null: clicks never expire' }),
    attributionModel: AttributionModel,
    clickDedupSeconds: z.number().int().openapi({ description: 'A repeat click of one visitor on one link within this many seconds is not counted; 0: off' }),
    reportingCurrency: z.string().openapi({
      description: "The currency of the single-number money totals (a link's totalRevenue): they count sales in this currency only, and every currency is in the …ByCurrency objects beside them. Default USD",
    }),
    maxWebhookEndpoints: z.number().int().openapi({ description: 'Webhook endpoints this program may have (set by the operator; default 20); one event goes to at most the platform\'s deliveries per event of them (20 unless the operator sets another)' }),
    // The risk settings are shown once the program set any of them; absent, they are the defaults (FLAG everywhere, no limit, no minimum).
    riskActions: RiskActions.optional().openapi({ description: 'What each risk signal does to a commission: OFF, FLAG (recorded only; the default), HOLD or VOID. Absent until the program sets a risk setting: FLAG everywhere' }),
    maxAutoApprovedCommission: z.number().nullable().optional().openapi({ description: "A commission above this amount, in the program's reportingCurrency, raises OVER_AUTO_APPROVAL_LIMIT; commissions in other currencies are not compared (nothing is converted); null or absent: no limit" }),
    minClickToConversionSeconds: z.number().int().nullable().optional().openapi({ description: 'A referral or sale sooner than this after its click raises FAST_CONVERSION; null or absent: not looked for' }),
    // The portal settings are shown once the program set one of them; absent, they are PORTAL_DEFAULTS.
    affiliateCouponIds: z.array(Uuid).optional().openapi({ description: 'Coupons under which affiliates may create their own promotional codes from the affiliate portal (isAffiliateGenerated); absent or empty: none' }),
    affiliatesMayAddLinks: z.boolean().optional().openapi({ description: 'Whether an affiliate may add a referral link from the affiliate portal; absent: false' }),
    // Shown once set, as the risk settings (a program that never set them keeps the shape it had).
    slug: z.string().nullable().optional().openapi({ description: 'The public name of the program in its sign-up page, /join/{slug}; unique across the platform; absent or null: none' }),
    signup: SignupSettings.optional().openapi({ description: 'The sign-up page; absent until the program sets it: off' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Program');

const programSettings = {
  urlModifier: z
    .string()
    .min(1)
    .max(50)
    .regex(/^[A-Za-z0-9_-]+$/, 'urlModifier can only contain letters, numbers, hyphens and underscores'),
  destinationUrls: z.array(DestinationUrl).max(20),
  requireApproval: z.boolean(),
  defaultCommissionRate: z.number().finite().min(0).max(100),
  apiAccess: z.boolean(),
  rateLimit: RateLimitSetting.nullable(),
  allowedOrigins: z.array(Origin).max(20),
  attributionWindowDays: z.number().int().min(1).max(365).nullable(),
  attributionModel: AttributionModel,
  clickDedupSeconds: z.number().int().min(0).max(2_592_000),
  reportingCurrency: Currency,
  maxWebhookEndpoints: z.number().int().min(1).max(MAX_WEBHOOK_ENDPOINTS_CEILING),
};

// Absent on create: the defaults above (no zod default, so generated clients keep the fields optional).
const trackingSettings = {
  allowedOrigins: programSettings.allowedOrigins.optional(),
  attributionWindowDays: programSettings.attributionWindowDays.optional(),
  attributionModel: programSettings.attributionModel.optional(),
  clickDedupSeconds: programSettings.clickDedupSeconds.optional(),
  reportingCurrency: programSettings.reportingCurrency.optional(),
  // Risk settings (README, "Fraud review"); absent: FLAG everywhere, no limit, no minimum.
  riskActions: RiskActionsBody.optional(),
  maxAutoApprovedCommission: z.number().finite().min(0).max(1_000_000_000).nullable().optional(),
  minClickToConversionSeconds: z.number().int().min(0).max(2_592_000).nullable().optional(),
  // Affiliate portal (README, "The affiliate portal"); absent: PORTAL_DEFAULTS.
  affiliateCouponIds: z
    .array(Uuid)
    .max(MAX_AFFILIATE_COUPONS)
    .refine((ids) => new Set(ids).size === ids.length, 'affiliateCouponIds: each coupon once')
    .optional(),
  affiliatesMayAddLinks: z.boolean().optional(),
  // The sign-up page (README, "Sign-up and approval"); absent: no slug, sign-up off.
  slug: ProgramSlug.nullable().optional(),
  signup: SignupSettings.optional(),
};

export const CreateProgramBody = z
  .object({
    name: ShortText,
    urlModifier: programSettings.urlModifier.default('ref'),
    destinationUrls: programSettings.destinationUrls.default([]),
    requireApproval: programSettings.requireApproval.default(false),
    defaultCommissionRate: programSettings.defaultCommissionRate.default(20),
    apiAccess: programSettings.apiAccess.default(true),
    /** Absent or null: the gateway's default limit. (No `default(null)`: generated clients skip an allOf-with-default body.) */
    rateLimit: programSettings.rateLimit.optional(),
    maxWebhookEndpoints: programSettings.maxWebhookEndpoints.optional(),
    ...trackingSettings,
  })
  .strict()
  .openapi('CreateProgramBody');

export const UpdateProgramBody = z
  .object({
    name: ShortText.optional(),
    urlModifier: programSettings.urlModifier.optional(),
    destinationUrls: programSettings.destinationUrls.optional(),
    requireApproval: programSettings.requireApproval.optional(),
    defaultCommissionRate: programSettings.defaultCommissionRate.optional(),
    apiAccess: programSettings.apiAccess.optional(),
    rateLimit: programSettings.rateLimit.optional(),
    maxWebhookEndpoints: programSettings.maxWebhookEndpoints.optional(),
    ...trackingSettings,
  })
  .strict()
  .openapi('UpdateProgramBody');

/** PUT /api/v1/program: what a program may change with its own API key; the rate limit, API access and endpoint cap stay the operator's. */
export const ProgramSettingsBody = UpdateProgramBody.omit({ apiAccess: true, rateLimit: true, maxWebhookEndpoints: true })
  .strict()
  .openapi('ProgramSettingsBody');

/**
 * What a secret API key may do (Stripe's restricted keys): `read` every lookup, `write` every change,
 * `finance` payouts and bank details, `webhook_secrets` reveal webhook signing secrets. Each operation
 * names what it needs in the table of operations (`x-required-scopes` in the document).
 */
export const API_SCOPES = ['read', 'write', 'finance', 'webhook_secrets'] as const;
export const ApiScope = z.enum(API_SCOPES).openapi('ApiScope');
export type ApiScope = z.infer<typeof ApiScope>;

export const CreateApiKeyBody = z
  .object({
    scopes: z
      .array(ApiScope)
      .min(1)
      .refine((scopes) => new Set(scopes).size === scopes.length, 'scopes: each scope once')
      .optional()
      .openapi({ description: 'What the key may do; absent: every scope' }),
  })
  .strict()
  .openapi('CreateApiKeyBody');

export const CreatedApiKey = z
  .object({ id: Uuid, key: z.string(), programId: Uuid, scopes: z.array(ApiScope), createdAt: DateTime })
  .openapi('CreatedApiKey', { description: 'The key is shown once; only its hash is stored.' });

export const ApiKeySummary = z
  .object({ id: Uuid, programId: Uuid, displayPrefix: z.string(), scopes: z.array(ApiScope), createdAt: DateTime, revokedAt: DateTime.nullable() })
  .openapi('ApiKeySummary', { description: 'An API key without its secret: the prefix tells keys apart.' });

export type Program = z.infer<typeof Program>;
export type CreateProgramBody = z.infer<typeof CreateProgramBody>;
export type UpdateProgramBody = z.infer<typeof UpdateProgramBody>;
export type ProgramSettingsBody = z.infer<typeof ProgramSettingsBody>;
export type AttributionModel = z.infer<typeof AttributionModel>;

/** One operator action (or refused attempt) on the admin API or the admin CLI: who, what, when. */
export const AuditRecord = z
  .object({
    id: Uuid,
    at: DateTime,
    actor: z.object({
      credential: z.enum(['admin-token', 'refused', 'cli']).openapi({ description: 'The admin token; refused (a wrong or missing token, or an address locked out after too many); or the admin CLI on the host' }),
      address: z.string().nullable(),
      userAgent: z.string().nullable(),
      user: z.string().nullable().openapi({ description: 'The operating-system user, for the CLI' }),
    }),
    action: z.string().openapi({ description: 'Method and route template, e.g. POST /admin/v1/programs/{id}/api-keys, or the CLI command' }),
    targetId: z.string().nullable(),
    status: z.number().int().openapi({ description: 'The HTTP status answered (the CLI records 200 or the failure status)' }),
    requestId: z.string().nullable(),
    count: z.number().int().openapi({
      description: 'Attempts this record stands for: refused attempts from one address are counted in one record per window (the first one described), everything else is 1',
    }),
    lastAt: DateTime.openapi({ description: 'The last attempt counted here' }),
  })
  .openapi('AuditRecord');

export type AuditRecord = z.infer<typeof AuditRecord>;

/** A publishable key (`pk_…`) is public by design, so it is shown in full, as Stripe shows its publishable keys. */
export const PublishableKey = z
  .object({ id: Uuid, programId: Uuid, key: z.string(), createdAt: DateTime, revokedAt: DateTime.nullable() })
  .openapi('PublishableKey', {
    description: 'Safe to put in a web page: it can only record clicks and create referrals from a click or visitor, from the allowed origins of its program.',
  });

export type PublishableKey = z.infer<typeof PublishableKey>;

export const RevokePublishableKeyBody = z.object({ publishableKeyId: Uuid }).strict().openapi('RevokePublishableKeyBody');

/** The acts a program's audit record keeps (see SensitiveAct in openapi.ts). */
export const ProgramAuditAction = z.enum(['webhook_secret.revealed', 'bank_details.exported', 'bank_details.changed', 'payout.status_changed']).openapi('ProgramAuditAction');
export type ProgramAuditAction = z.infer<typeof ProgramAuditAction>;

/** One sensitive act (or refused attempt at it) by one of the program's API keys, or by an affiliate in a portal session one of them made. */
export const ProgramAuditRecord = z
  .object({
    id: Uuid,
    at: DateTime,
    actor: z
      .object({
        apiKeyId: Uuid.openapi({ description: 'The key that did it; for an act in the affiliate portal, the key that made the portal session' }),
        apiKeyPrefix: z.string().openapi({ description: 'The first characters of the key, as in the key list' }),
        affiliatePortalSessionId: Uuid.optional().openapi({ description: 'Only for an act in the affiliate portal: the portal session (POST /affiliate-portal-sessions) that did it' }),
        affiliateId: Uuid.optional().openapi({ description: 'Only for an act in the affiliate portal: the affiliate of that session' }),
      })
      .openapi({ description: 'An API key, or an affiliate portal session (then also the key that made it): the fields of an API key are always there' }),
    action: ProgramAuditAction,
    operation: z.string().openapi({ description: 'Method and path, e.g. GET /api/v1/payouts/export' }),
    status: z.number().int().openapi({ description: 'The HTTP status answered: 200 when it happened, 403 when the key lacked the scope' }),
    aborted: z.boolean().openapi({ description: 'True when the client dropped the connection before the whole answer was sent (recorded all the same)' }),
    requestId: z.string().nullable(),
  })
  .openapi('ProgramAuditRecord');
export type ProgramAuditRecord = z.infer<typeof ProgramAuditRecord>;
