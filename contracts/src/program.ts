import { Currency, DateTime, ShortText, Uuid } from './common';
import { RiskActions, RiskActionsBody } from './risk';
import { ProgramSlug, SignupSettings } from './signup';
import { z } from './zod';

export const DestinationUrl = z
  .object({
    url: z
      .string()
      .url()
      .max(2000)
      .refine((url) => /^https?:\/\//i.test(url), 'must be an http or https URL')
      .openapi({ description: "A page of the program's site that referral links lead to (http or https)" }),
    params: z
      .record(z.string().min(1).max(100), z.string().max(500))
      .default({})
      .openapi({ description: 'Query parameters added to this URL in every full link, e.g. {"utm_source": "affiliate"} (default none)' }),
  })
  .strict();

const URL_MODIFIER = 'The query parameter that carries the slug in full links (default ref: https://shop.example.com/?ref=<slug>)';
const DESTINATION_URLS = "The program's pages referral links lead to: each link gets one full URL per destination";
const REQUIRE_APPROVAL = 'Whether new affiliates are PENDING until approved (PUT /affiliates status ACTIVE) rather than ACTIVE at once';
const DEFAULT_COMMISSION_RATE = 'The percentage of each sale an affiliate earns when neither it nor the program has a commission plan';
const API_ACCESS = 'Whether the API keys of the program work; false: every request with them is a 403';

export const RateLimitSetting = z
  .object({
    points: z.number().int().min(1).max(1_000_000).openapi({ description: 'Requests allowed per window, 1 to 1,000,000' }),
    duration: z.number().int().min(1).max(86_400).openapi({ description: 'The window, in seconds (1 to 86,400)' }),
  })
  .strict()
  .openapi('RateLimitSetting', { description: 'Requests allowed per duration (seconds) for each key, route and method.' });

/** How a visitor's clicks decide whom a referral by visitor belongs to (DESIGN.md §12). */
export const AttributionModel = z.enum(['FIRST_CLICK', 'LAST_CLICK']).openapi('AttributionModel', {
  description: "FIRST_CLICK: the visitor's earliest click within the attribution window; LAST_CLICK: the latest",
});

/** An exact browser origin (scheme, host and port only), as the Origin header sends it. */
export const Origin = z
  .string()
  .max(200)
  .refine(
    isExactOrigin,
    'must be an exact origin such as https://shop.example.com (scheme, host and optional port; no path, no trailing slash)',
  );

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
    id: Uuid.openapi({ description: "The program's id" }),
    name: z.string().openapi({ description: "The program's name" }),
    urlModifier: z.string().openapi({ description: URL_MODIFIER }),
    destinationUrls: z
      .array(
        z.object({
          url: z.string().openapi({ description: 'A page referral links lead to' }),
          params: z.record(z.string()).openapi({ description: 'Query parameters added to it in every full link' }),
        }),
      )
      .openapi({ description: DESTINATION_URLS }),
    requireApproval: z.boolean().openapi({ description: REQUIRE_APPROVAL }),
    defaultCommissionRate: z.number().openapi({ description: DEFAULT_COMMISSION_RATE }),
    apiAccess: z.boolean().openapi({ description: API_ACCESS }),
    rateLimit: RateLimitSetting.nullable(),
    allowedOrigins: z
      .array(z.string())
      .openapi({ description: 'Browser origins allowed to use the publishable keys (CORS); empty: no browser access' }),
    attributionWindowDays: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Days a click can still be credited; null: clicks never expire' }),
    attributionModel: AttributionModel,
    clickDedupSeconds: z
      .number()
      .int()
      .openapi({ description: 'A repeat click of one visitor on one link within this many seconds is not counted; 0: off' }),
    reportingCurrency: z.string().openapi({
      description:
        "The currency of the single-number money totals (a link's totalRevenue): they count sales in this currency only, and every currency is in the …ByCurrency objects beside them. Default USD",
    }),
    maxWebhookEndpoints: z.number().int().openapi({
      description:
        "Webhook endpoints this program may have (set by the operator; default 20); one event goes to at most the platform's deliveries per event of them (20 unless the operator sets another)",
    }),
    // The risk settings are shown once the program set any of them; absent, they are the defaults (FLAG everywhere, no limit, no minimum).
    riskActions: RiskActions.optional().openapi({
      description:
        'What each risk signal does to a commission: OFF, FLAG (recorded only; the default), HOLD or VOID. Absent until the program sets a risk setting: FLAG everywhere',
    }),
    maxAutoApprovedCommission: z.number().nullable().optional().openapi({
      description:
        "A commission above this amount, in the program's reportingCurrency, raises OVER_AUTO_APPROVAL_LIMIT; commissions in other currencies are not compared (nothing is converted); null or absent: no limit",
    }),
    minClickToConversionSeconds: z.number().int().nullable().optional().openapi({
      description: 'A referral or sale sooner than this after its click raises FAST_CONVERSION; null or absent: not looked for',
    }),
    // The portal settings are shown once the program set one of them; absent, they are PORTAL_DEFAULTS.
    affiliateCouponIds: z.array(Uuid).optional().openapi({
      description:
        'Coupons under which affiliates may create their own promotional codes from the affiliate portal (isAffiliateGenerated); absent or empty: none',
    }),
    affiliatesMayAddLinks: z
      .boolean()
      .optional()
      .openapi({ description: 'Whether an affiliate may add a referral link from the affiliate portal; absent: false' }),
    // Shown once set, as the risk settings (a program that never set them keeps the shape it had).
    slug: z.string().nullable().optional().openapi({
      description: 'The public name of the program in its sign-up page, /join/{slug}; unique across the platform; absent or null: none',
    }),
    signup: SignupSettings.optional().openapi({ description: 'The sign-up page; absent until the program sets it: off' }),
    createdAt: DateTime.openapi({ description: 'When the program was created' }),
    updatedAt: DateTime.openapi({ description: 'When its settings last changed' }),
  })
  .openapi('Program', {
    description: 'An affiliate program: its settings for links, attribution, approval, risk, the affiliate portal and the sign-up page',
  });

const programSettings = {
  urlModifier: z
    .string()
    .min(1)
    .max(50)
    .regex(/^[A-Za-z0-9_-]+$/, 'urlModifier can only contain letters, numbers, hyphens and underscores')
    .openapi({ description: `${URL_MODIFIER}: letters, numbers, hyphens and underscores, at most 50` }),
  destinationUrls: z
    .array(DestinationUrl)
    .max(20)
    .openapi({ description: `${DESTINATION_URLS} (at most 20); replaces the list` }),
  requireApproval: z.boolean().openapi({ description: REQUIRE_APPROVAL }),
  defaultCommissionRate: z
    .number()
    .finite()
    .min(0)
    .max(100)
    .openapi({ description: `${DEFAULT_COMMISSION_RATE} (0 to 100)` }),
  apiAccess: z.boolean().openapi({ description: API_ACCESS }),
  rateLimit: RateLimitSetting.nullable(),
  allowedOrigins: z.array(Origin).max(20).openapi({
    description:
      'Browser origins allowed to use the publishable keys (CORS), each exact, e.g. https://shop.example.com (at most 20); empty: no browser access',
  }),
  attributionWindowDays: z
    .number()
    .int()
    .min(1)
    .max(365)
    .nullable()
    .openapi({ description: 'Days a click can still be credited, 1 to 365; null: clicks never expire (the default)' }),
  attributionModel: AttributionModel,
  clickDedupSeconds: z.number().int().min(0).max(2_592_000).openapi({
    description: 'A repeat click of one visitor on one link within this many seconds is not counted, 0 to 2,592,000 (default 3600); 0: off',
  }),
  reportingCurrency: Currency.openapi({
    description: "The currency of the single-number money totals (a link's totalRevenue); default USD",
  }),
  maxWebhookEndpoints: z
    .number()
    .int()
    .min(1)
    .max(MAX_WEBHOOK_ENDPOINTS_CEILING)
    .openapi({
      description: `Webhook endpoints the program may have, 1 to ${MAX_WEBHOOK_ENDPOINTS_CEILING} (default ${PROGRAM_LIMIT_DEFAULTS.maxWebhookEndpoints})`,
    }),
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
  maxAutoApprovedCommission: z.number().finite().min(0).max(1_000_000_000).nullable().optional().openapi({
    description: "A commission above this amount, in the program's reportingCurrency, raises OVER_AUTO_APPROVAL_LIMIT; null: no limit",
  }),
  minClickToConversionSeconds: z.number().int().min(0).max(2_592_000).nullable().optional().openapi({
    description: 'A referral or sale sooner than this many seconds after its click raises FAST_CONVERSION; null: not looked for',
  }),
  // Affiliate portal (README, "The affiliate portal"); absent: PORTAL_DEFAULTS.
  affiliateCouponIds: z
    .array(Uuid)
    .max(MAX_AFFILIATE_COUPONS)
    .refine((ids) => new Set(ids).size === ids.length, 'affiliateCouponIds: each coupon once')
    .optional()
    .openapi({
      description: `Coupons under which affiliates may create their own codes in the affiliate portal (at most ${MAX_AFFILIATE_COUPONS}, each once); empty: none`,
    }),
  affiliatesMayAddLinks: z
    .boolean()
    .optional()
    .openapi({ description: 'Whether an affiliate may add a referral link in the affiliate portal (default false)' }),
  // The sign-up page (README, "Sign-up and approval"); absent: no slug, sign-up off.
  slug: ProgramSlug.nullable().optional(),
  signup: SignupSettings.optional(),
};

export const CreateProgramBody = z
  .object({
    name: ShortText.openapi({ description: "The program's name" }),
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
    name: ShortText.optional().openapi({ description: "The program's name" }),
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
export const ApiScope = z.enum(API_SCOPES).openapi('ApiScope', {
  description:
    'read: every lookup; write: every change; finance: payouts and bank details; webhook_secrets: reveal webhook signing secrets',
});
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
  .object({
    id: Uuid.openapi({ description: "The key's id, to revoke it" }),
    key: z.string().openapi({ description: 'The secret key, for the Authorization: Bearer header: shown this once' }),
    programId: Uuid.openapi({ description: 'The program the key acts for' }),
    scopes: z.array(ApiScope).openapi({ description: 'What the key may do' }),
    createdAt: DateTime.openapi({ description: 'When the key was created' }),
  })
  .openapi('CreatedApiKey', { description: 'The key is shown once; only its hash is stored.' });

export const ApiKeySummary = z
  .object({
    id: Uuid.openapi({ description: "The key's id" }),
    programId: Uuid.openapi({ description: 'The program the key acts for' }),
    displayPrefix: z.string().openapi({ description: 'The first characters of the key, to recognise it' }),
    scopes: z.array(ApiScope).openapi({ description: 'What the key may do' }),
    createdAt: DateTime.openapi({ description: 'When the key was created' }),
    revokedAt: DateTime.nullable().openapi({ description: 'When it was revoked; null: it works' }),
  })
  .openapi('ApiKeySummary', { description: 'An API key without its secret: the prefix tells keys apart.' });

export type Program = z.infer<typeof Program>;
export type CreateProgramBody = z.infer<typeof CreateProgramBody>;
export type UpdateProgramBody = z.infer<typeof UpdateProgramBody>;
export type ProgramSettingsBody = z.infer<typeof ProgramSettingsBody>;
export type AttributionModel = z.infer<typeof AttributionModel>;

/** One operator action (or refused attempt) on the admin API or the admin CLI: who, what, when. */
export const AuditRecord = z
  .object({
    id: Uuid.openapi({ description: "The record's id" }),
    at: DateTime.openapi({ description: 'When it happened (the first attempt, for a count of refused ones)' }),
    actor: z
      .object({
        credential: z.enum(['admin-token', 'refused', 'cli']).openapi({
          description:
            'The admin token; refused (a wrong or missing token, or an address locked out after too many); or the admin CLI on the host',
        }),
        address: z.string().nullable().openapi({ description: "The caller's address; null for the CLI" }),
        userAgent: z.string().nullable().openapi({ description: "The caller's User-Agent; null for the CLI" }),
        user: z.string().nullable().openapi({ description: 'The operating-system user, for the CLI' }),
      })
      .openapi({ description: 'Who acted' }),
    action: z
      .string()
      .openapi({ description: 'Method and route template, e.g. POST /admin/v1/programs/{id}/api-keys, or the CLI command' }),
    targetId: z.string().nullable().openapi({ description: 'The program or key acted on; null when none' }),
    status: z.number().int().openapi({ description: 'The HTTP status answered (the CLI records 200 or the failure status)' }),
    requestId: z.string().nullable().openapi({ description: 'The X-Request-Id of the request, to find it in the logs; null for the CLI' }),
    count: z.number().int().openapi({
      description:
        'Attempts this record stands for: refused attempts from one address are counted in one record per window (the first one described), everything else is 1',
    }),
    lastAt: DateTime.openapi({ description: 'The last attempt counted here' }),
  })
  .openapi('AuditRecord', { description: 'One operator action (or refused attempt) on the admin API or the admin CLI' });

export type AuditRecord = z.infer<typeof AuditRecord>;

/** A publishable key (`pk_…`) is public by design, so it is shown in full, as Stripe shows its publishable keys. */
export const PublishableKey = z
  .object({
    id: Uuid.openapi({ description: "The key's id, to revoke it" }),
    programId: Uuid.openapi({ description: 'The program' }),
    key: z.string().openapi({ description: 'The publishable key (pk_…), for the tracking script' }),
    createdAt: DateTime.openapi({ description: 'When the key was created' }),
    revokedAt: DateTime.nullable().openapi({ description: 'When it was revoked; null: it works' }),
  })
  .openapi('PublishableKey', {
    description:
      'Safe to put in a web page: it can only record clicks and create referrals from a click or visitor, from the allowed origins of its program.',
  });

export type PublishableKey = z.infer<typeof PublishableKey>;

export const RevokePublishableKeyBody = z
  .object({ publishableKeyId: Uuid.openapi({ description: 'The key to revoke' }) })
  .strict()
  .openapi('RevokePublishableKeyBody');

/** The acts a program's audit record keeps (see SensitiveAct in openapi.ts). */
export const ProgramAuditAction = z
  .enum([
    'webhook_secret.revealed',
    'bank_details.exported',
    'bank_details.changed',
    'payout.status_changed',
    'team.member_invited',
    'team.member_joined',
    'team.role_changed',
    'team.member_removed',
    'team.totp_changed',
    'api_key.created',
    'api_key.revoked',
    'member.change',
  ])
  .openapi('ProgramAuditAction', {
    description:
      "webhook_secret.revealed: an endpoint's signing secret was shown; bank_details.exported: full bank details left in a CSV; bank_details.changed: an affiliate's payout details were set or cleared; payout.status_changed: a payout was marked PAID or FAILED; team.member_invited, team.role_changed, team.member_removed: an owner changed the team; team.member_joined: an invite was accepted and made a member (the actor is the new member); team.totp_changed: a member started setting up, turned on or turned off their second factor; api_key.created, api_key.revoked: an owner made or revoked a secret API key in the console; member.change: any other change (a request other than GET or HEAD) a team member made or tried in a console session, refused ones included (the operation and status say which)",
  });
export type ProgramAuditAction = z.infer<typeof ProgramAuditAction>;

/** One sensitive act (or refused attempt at it) by one of the program's API keys, or by an affiliate in a portal session one of them made. */
export const ProgramAuditRecord = z
  .object({
    id: Uuid.openapi({ description: "The record's id" }),
    at: DateTime.openapi({ description: 'When it happened' }),
    actor: z
      .object({
        apiKeyId: Uuid.optional().openapi({
          description:
            'The key that did it; for an act in the affiliate portal, the key that made the portal session; absent for an act of a team member',
        }),
        apiKeyPrefix: z
          .string()
          .optional()
          .openapi({ description: 'The first characters of the key, as in the key list; absent for an act of a team member' }),
        affiliatePortalSessionId: Uuid.optional().openapi({
          description: 'Only for an act in the affiliate portal: the portal session (POST /affiliate-portal-sessions) that did it',
        }),
        affiliateId: Uuid.optional().openapi({ description: 'Only for an act in the affiliate portal: the affiliate of that session' }),
        memberId: z.string().optional().openapi({
          description:
            'Only for an act of a team member signed in to the console, or in an affiliate portal session a member opened: the member (mbr_…)',
          example: 'mbr_9f1c2d3e-4b5a-4c6d-8e7f-001122334455',
        }),
        email: z.string().optional().openapi({ description: "Only for an act of a team member: the member's email" }),
      })
      .openapi({
        description:
          'An API key; an affiliate portal session (then also the key that made it); or a team member signed in to the console (memberId and email, no key)',
      }),
    action: ProgramAuditAction,
    operation: z.string().openapi({ description: 'Method and path, e.g. GET /api/v1/payouts/export' }),
    status: z.number().int().openapi({
      description:
        "The HTTP status answered: 200 when it happened, 403 when the key lacked the scope or the member's role did not allow it",
    }),
    aborted: z
      .boolean()
      .openapi({ description: 'True when the client dropped the connection before the whole answer was sent (recorded all the same)' }),
    requestId: z.string().nullable().openapi({ description: 'The X-Request-Id of the request' }),
  })
  .openapi('ProgramAuditRecord', {
    description:
      'One sensitive act, or a refused attempt at it, by an API key of the program or an affiliate portal session; and every change a team member made or tried in a console session',
  });
export type ProgramAuditRecord = z.infer<typeof ProgramAuditRecord>;
