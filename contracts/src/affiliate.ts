import { dateRange, DateTime, Email, ListFormat, ListQuery, ShortText, Uuid } from './common';
import { CommissionPlanSummary, CommissionTier, FullPayoutDetails, PayoutDetails, PayoutDetailsBody, PlanInForce } from './commission';
import { PromotionalCodeSummary } from './coupon';
import { RiskSettings } from './risk';
import { SignupAnswer } from './signup';
import { z } from './zod';

export const AffiliateStatus = z.enum(['PENDING', 'ACTIVE', 'REJECTED', 'DISABLED']);

const AFFILIATE_STATUS =
  'PENDING: waiting for approval (programs that require it); ACTIVE: earns commission; REJECTED: application refused; DISABLED: no longer active';
const COMMISSION_RATE = 'Percentage of each sale the affiliate earns (0 to 100) when no commission plan applies';

export const LINK_MESSAGES = {
  invalidCharacters: 'Link can only contain letters, numbers, and hyphens',
  alreadyExists: 'This link already exists for this affiliate program',
  inUseOnCreate: 'The requested affiliate link is already in use',
} as const;

/** A slug: only letters, numbers and hyphens (spec, Links). */
export const Slug = z
  .string()
  .min(1, LINK_MESSAGES.invalidCharacters)
  .max(100)
  .regex(/^[A-Za-z0-9-]+$/, LINK_MESSAGES.invalidCharacters);

export const CommissionRate = z.number().finite().min(0).max(100);

export const AffiliateLink = z
  .object({
    id: Uuid.openapi({ description: "The link's id" }),
    link: z.string().openapi({ description: "The slug, added to the program's destination URLs in its URL parameter" }),
    userId: Uuid.openapi({ description: 'The affiliate that owns the link' }),
    programId: Uuid.openapi({ description: 'The program' }),
    createdAt: DateTime.openapi({ description: 'When the link was added' }),
    updatedAt: DateTime.openapi({ description: 'When the link was last renamed' }),
  })
  .openapi('AffiliateLink', { description: 'One referral link (slug) of an affiliate' });

export const Affiliate = z
  .object({
    id: Uuid.openapi({ description: "The affiliate's id" }),
    firstName: z.string().openapi({ description: 'First name' }),
    lastName: z.string().openapi({ description: 'Last name' }),
    email: z.string().email().openapi({ description: 'Email address, unique within the program' }),
    status: AffiliateStatus.openapi({ description: AFFILIATE_STATUS }),
    commissionRate: z.number().openapi({ description: COMMISSION_RATE }),
    link: z.string().nullable().openapi({ deprecated: true, description: 'Legacy single link, always null: read affiliateLinks.' }),
    affiliateLinks: z
      .array(AffiliateLink)
      .openapi({ description: 'Every referral link of the affiliate, one per slug: the source of truth for links' }),
    programId: Uuid.openapi({ description: 'The program' }),
    commissionPlan: CommissionPlanSummary.nullable().openapi({
      description: "The plan the affiliate earns by: its own, else the program's default; null while it earns its own commissionRate",
    }),
    commissionTier: CommissionTier.nullable(),
    payoutDetails: PayoutDetails.nullable(),
    promotionalCodes: z
      .array(PromotionalCodeSummary)
      .optional()
      .openapi({ description: 'The codes assigned to the affiliate; in affiliate.created (empty: a new affiliate has none yet)' }),
    signupAnswers: z.array(SignupAnswer).openapi({
      description: 'What the affiliate answered on the sign-up page (POST /join/{slug}); empty for an affiliate created otherwise',
    }),
    createdAt: DateTime.openapi({ description: 'When the affiliate was created' }),
    updatedAt: DateTime.openapi({ description: 'When the affiliate last changed' }),
  })
  .openapi('Affiliate', { description: 'A partner of the program, with its referral links, commission plan and tier, and payout details' });

export const FullUrl = z.object({
  baseUrl: z.string().openapi({ description: "One of the program's destination URLs" }),
  fullUrl: z.string().openapi({
    description: "That URL with the slug in the program's URL parameter (urlModifier, default ref) and the URL's own parameters",
  }),
});

export const LinkResponse = z
  .object({
    id: Uuid.openapi({ description: "The link's id" }),
    link: z.string().openapi({ description: 'The current slug' }),
    previousLinks: z
      .array(
        z.object({
          link: z.string().openapi({ description: 'A slug the link had before' }),
          reservedUntil: DateTime.nullable().openapi({ description: 'Until when it stays reserved for this link; null: for ever' }),
        }),
      )
      .openapi({
        description:
          'Slugs this link was renamed from that still lead to it: clicks and referrals on them count here, and no other affiliate can take them until reservedUntil (null: for ever; the PREVIOUS_LINK_DAYS setting)',
      }),
    affiliateId: Uuid.openapi({ description: 'The affiliate that owns the link' }),
    clicks: z.number().int().openapi({
      description: 'Clicks on this link (on its current and previous slugs), repeats within clickDedupSeconds and bots not counted',
    }),
    referrals: z.number().int().openapi({
      description:
        "Live referrals counted on this link: those attributed through it (a click, a visitor's click, the slug) and, on the affiliate's first link, those attributed by affiliateId or affiliateEmail",
    }),
    sales: z.number().int().openapi({
      description:
        "Live sales (not reversed) in every currency counted on this link: those whose attribution went through it (a referral or click of this link) and, on the affiliate's first link, those by promotional code, by a referral without a link, or by affiliate id",
    }),
    totalRevenue: z.number().openapi({
      description:
        "The totalEarned of those sales in the program's reportingCurrency only (default USD); sales in other currencies are in revenueByCurrency, never added here",
    }),
    salesByCurrency: z.record(z.number().int()).openapi({ description: 'The sales above per currency (ISO 4217 code → count)' }),
    revenueByCurrency: z
      .record(z.number())
      .openapi({ description: 'Their totalEarned per currency (ISO 4217 code → amount in that currency), e.g. {"USD": 10, "EUR": 49.99}' }),
    fullURLs: z.array(FullUrl).openapi({ description: 'One entry per destination URL of the program: the address to share' }),
    createdAt: DateTime.openapi({ description: 'When the link was added' }),
    updatedAt: DateTime.openapi({ description: 'When the link was last renamed' }),
  })
  .openapi('Link', { description: 'A referral link with its statistics and the full URLs to share' });

export const CreateAffiliateBody = z
  .object({
    firstName: ShortText.openapi({ description: 'First name (1 to 200 characters)' }),
    lastName: ShortText.openapi({ description: 'Last name (1 to 200 characters)' }),
    email: Email.openapi({ description: 'Email address, unique within the program (400 otherwise)' }),
    affiliateLink: Slug.optional().openapi({
      description:
        'The slug of the first link (letters, numbers and hyphens); absent: one is made from the email. 400 when another affiliate uses it',
    }),
    commissionRate: CommissionRate.optional().openapi({ description: `${COMMISSION_RATE}; absent: the program's defaultCommissionRate` }),
    commissionPlanId: Uuid.optional().openapi({
      description: "The commission plan the affiliate earns by; absent: the program's default plan, if any",
    }),
  })
  .strict()
  .openapi('CreateAffiliateBody');

export const UpdateAffiliateBody = z
  .object({
    affiliateId: Uuid.openapi({ description: 'The affiliate to change' }),
    firstName: ShortText.optional().openapi({ description: 'A new first name' }),
    lastName: ShortText.optional().openapi({ description: 'A new last name' }),
    email: Email.optional().openapi({ description: 'A new email address, unique within the program' }),
    status: AffiliateStatus.optional().openapi({
      description: 'A new status: ACTIVE approves a PENDING affiliate, REJECTED refuses it, DISABLED stops an active one',
    }),
    commissionRate: CommissionRate.optional().openapi({ description: COMMISSION_RATE }),
    affiliateLink: Slug.optional().openapi({
      description: 'Adds a link with this slug (existing links are never renamed or removed here)',
    }),
    commissionPlanId: Uuid.nullable().optional().openapi({ description: "null: back to the program's default plan" }),
    payoutDetails: PayoutDetailsBody.nullable()
      .optional()
      .openapi({ description: 'Where payouts go; null clears them. Needs the finance scope and is kept in the audit record' }),
  })
  .strict()
  .openapi('UpdateAffiliateBody');

export const DeleteAffiliateBody = z
  .object({ affiliateId: Uuid.openapi({ description: 'The affiliate to delete' }) })
  .strict()
  .openapi('DeleteAffiliateBody');

export const AffiliateQuery = ListQuery.extend({
  id: z.string().max(200).optional().openapi({
    description:
      'An affiliate id, a numeric click id (tried first when the value is all digits) or a link slug: answers that one affiliate',
  }),
  email: z.string().max(254).optional().openapi({ description: "An affiliate's email: answers that one affiliate" }),
  status: AffiliateStatus.optional().openapi({
    description: 'With no id or email: only the affiliates of this status (PENDING: the applications waiting for approval)',
  }),
  ...dateRange('createdAt', 'creation'),
  format: ListFormat,
}).strict();

const LinkOwner = {
  affiliateId: Uuid.optional().openapi({ description: 'The affiliate the link is for (or affiliateEmail)' }),
  affiliateEmail: Email.optional().openapi({ description: 'The affiliate the link is for, by email (or affiliateId)' }),
};

export const CreateLinkBody = z
  .object({
    link: Slug.openapi({ description: 'The slug: letters, numbers and hyphens, at most 100, unique across the program' }),
    ...LinkOwner,
  })
  .strict()
  .refine((body) => body.affiliateId !== undefined || body.affiliateEmail !== undefined, {
    path: ['affiliateId'],
    message: 'affiliateId or affiliateEmail is required',
  })
  .openapi('CreateLinkBody');

const LinkTarget = {
  linkId: Uuid.optional().openapi({ description: 'The link, by id (or link)' }),
  link: z.string().max(100).optional().openapi({ description: 'The link, by its current slug (or linkId)' }),
};
const hasLinkTarget = (body: { linkId?: string; link?: string }) => body.linkId !== undefined || body.link !== undefined;

export const RenameLinkBody = z
  .object({
    ...LinkTarget,
    newLink: Slug.openapi({ description: 'The new slug: letters, numbers and hyphens, unique across the program' }),
  })
  .strict()
  .refine(hasLinkTarget, { path: ['linkId'], message: 'linkId or link is required' })
  .openapi('RenameLinkBody');

export const DeleteLinkBody = z
  .object(LinkTarget)
  .strict()
  .refine(hasLinkTarget, { path: ['linkId'], message: 'linkId or link is required' })
  .openapi('DeleteLinkBody');

export const LinkQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A link id: that link' }),
  link: z.string().max(100).optional().openapi({ description: 'A slug: that link' }),
  affiliateId: z.string().max(100).optional().openapi({
    description:
      'An affiliate id: every link of that affiliate, oldest first; with a createdAt period, limit or startingAfter, a filter of the list (newest first, paged)',
  }),
  affiliateEmail: z.string().max(254).optional().openapi({ description: "An affiliate's email: every link of that affiliate" }),
  ...dateRange('createdAt', 'creation'),
}).strict();

/** A visitor id as the tracking script makes it (random, kept in a first-party cookie), or the integrator's own. */
export const VisitorId = z
  .string()
  .min(8)
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/, 'visitorId can only contain letters, numbers, hyphens and underscores');

export const RecordClickBody = z
  .object({
    link: z
      .string()
      .min(1)
      .max(100)
      .openapi({ description: 'The slug that was clicked (a previous slug of a renamed link counts for the link)' }),
    landingUrl: z.string().url().max(2000).optional().openapi({ description: 'The page the visitor landed on' }),
    visitorId: VisitorId.optional().openapi({
      description: 'Who clicked: repeat clicks of one visitor on one link within clickDedupSeconds count once',
    }),
    userAgent: z
      .string()
      .max(1000)
      .optional()
      .openapi({ description: "The visitor's User-Agent: bots are not counted; with ipAddress, the identity when there is no visitorId" }),
    ipAddress: z
      .string()
      .ip()
      .optional()
      .openapi({ description: "The visitor's address: only an HMAC of it (with the user agent) is kept, never the address" }),
    referrer: z.string().url().max(2000).optional().openapi({ description: 'The page the visitor came from' }),
    occurredAt: DateTime.optional().openapi({
      description: 'When the click happened, for imports: in the past, at most 90 days ago; default now',
    }),
  })
  .strict()
  .openapi('RecordClickBody');

export const ClickNotCountedReason = z.enum(['DUPLICATE', 'BOT']);

export const Click = z
  .object({
    clickId: z.number().int().nullable().openapi({ description: "The click's id; for a duplicate, the first click's; null for a bot" }),
    link: z.string().openapi({ description: 'The slug clicked' }),
    affiliateId: Uuid.openapi({ description: "The link's affiliate" }),
    counted: z.boolean().openapi({ description: "Whether the click counts in the link's clicks" }),
    // A union, not .nullable(): the 3.1 generator would keep null out of the enum.
    reason: z
      .union([ClickNotCountedReason, z.null()])
      .openapi({ description: 'Why it was not counted: DUPLICATE (the same visitor within clickDedupSeconds) or BOT' }),
  })
  .openapi('Click', { description: 'A recorded click: its id to attribute a referral or sale by, and whether it counted' });

/** Why a referral or sale went to its affiliate. */
export const AttributionMethod = z.enum(['CLICK', 'VISITOR', 'LINK', 'PROMO_CODE', 'REFERRAL', 'AFFILIATE', 'EMAIL']);

export const AttributionReason = z
  .object({
    method: AttributionMethod.openapi({
      description:
        'CLICK: by a click id; VISITOR: by a visitor id, through its clicks and the attribution model; LINK: by a link slug; PROMO_CODE: by the code used; REFERRAL: by the referral id; AFFILIATE: the affiliate named directly; EMAIL: by the customer email of an earlier referral',
    }),
    clickId: z.number().int().nullable().openapi({ description: 'The click credited (CLICK and VISITOR); else null' }),
    clickedAt: DateTime.nullable().openapi({ description: 'When that click happened; else null' }),
    ageSeconds: z.number().int().nullable().openapi({ description: 'Seconds from the click to the attribution' }),
    affiliateId: Uuid.openapi({ description: 'The affiliate credited' }),
  })
  .openapi('AttributionReason', { description: 'Why a referral or sale went to its affiliate' });

export type Affiliate = z.infer<typeof Affiliate>;
export type AffiliateLink = z.infer<typeof AffiliateLink>;
export type AffiliateStatus = z.infer<typeof AffiliateStatus>;
export type LinkResponse = z.infer<typeof LinkResponse>;
export type CreateAffiliateBody = z.infer<typeof CreateAffiliateBody>;
export type UpdateAffiliateBody = z.infer<typeof UpdateAffiliateBody>;
export type CreateLinkBody = z.infer<typeof CreateLinkBody>;
export type RenameLinkBody = z.infer<typeof RenameLinkBody>;
export type DeleteLinkBody = z.infer<typeof DeleteLinkBody>;
export type RecordClickBody = z.infer<typeof RecordClickBody>;
export type AttributionReason = z.infer<typeof AttributionReason>;
export type AttributionMethod = z.infer<typeof AttributionMethod>;

/**
 * Internal read API of the affiliate service (never exposed through the gateway), used by the coupon,
 * referral and sale services to resolve affiliates with read-your-writes consistency (but for
 * `recent=true`, which the sale service sends while recording a sale: then the affiliate process may
 * answer what it read up to 2 s ago, so a change made on another replica is seen within 2 s):
 *   GET /internal/affiliates?id=<uuid> | ?email=<email> [&risk=true] [&recent=true]
 *                                                            → 200 InternalAffiliate, 404 when unknown
 *   GET /internal/attribution?clickId=<n> | ?visitorId=<id> | ?link=<slug> | ?affiliateId=<uuid> | ?affiliateEmail=<email>
 *                                                            → 200 ExplainedAttribution, 404 when nothing resolves,
 *                                                              400 for a click older than the attribution window
 */
export const InternalAffiliate = z.object({
  id: Uuid,
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  status: AffiliateStatus,
  commissionRate: z.number(),
  /** The plan in force now, with the tier reached on it: a sale's commission is computed from it. */
  plan: PlanInForce,
  /** In full (the IBAN too): what a payout pays to. */
  payoutDetails: FullPayoutDetails.nullable(),
  /** The program's risk settings as this service last heard them (program.* events); absent from an older replica: the defaults. */
  riskSettings: RiskSettings.optional(),
});

export const Attribution = z.object({
  affiliateId: Uuid,
  linkId: Uuid.nullable(),
  link: z.string().nullable(),
  clickId: z.number().int().nullable(),
});

/**
 * What the risk signals of a referral or sale need of the affiliate service, in the answer the
 * caller asks for anyway: the program's risk settings, the affiliate's email (SELF_REFERRAL), and
 * how many affiliates' links the visitor behind the click clicked within an hour (COOKIE_STUFFING;
 * null when the click carries no visitor id). Absent from an older replica: no signal from it.
 */
export const AttributionRisk = z.object({
  settings: RiskSettings,
  affiliateEmail: z.string(),
  visitorAffiliatesWithinHour: z.number().int().nullable(),
});

/** What GET /internal/attribution answers: whom, and why, as the referral will explain it (method CLICK, VISITOR, LINK or AFFILIATE). */
export const ExplainedAttribution = Attribution.extend({ reason: AttributionReason, risk: AttributionRisk.optional() });

export type InternalAffiliate = z.infer<typeof InternalAffiliate>;
export type Attribution = z.infer<typeof Attribution>;
export type ExplainedAttribution = z.infer<typeof ExplainedAttribution>;
export type AttributionRisk = z.infer<typeof AttributionRisk>;
