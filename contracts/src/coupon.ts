import { Amount, Currency, dateRange, DateTime, Email, ListQuery, Metadata, ShortText, Uuid } from './common';
import { z } from './zod';

export const CouponType = z.enum(['PERCENTAGE', 'FLAT']);
export const CouponDuration = z.enum(['once', 'forever', 'repeating']);
export const CouponCategory = z.enum(['CUSTOMER', 'PAYOUT']);
/** NONE plus the seven billing providers the spec describes by kind. */
export const IntegrationType = z.enum([
  'NONE',
  'STRIPE',
  'CHARGEBEE',
  'PADDLE',
  'SHOPIFY',
  'WOOCOMMERCE',
  'RECURLY',
  'BRAINTREE',
]);
/** Nullable with null among the enum values, so validators accept the null the specification allows. */
const NullableIntegrationType = IntegrationType.nullable().openapi({ enum: [...IntegrationType.options, null] });

const ProductIds = z.array(ShortText).max(500);

export const AffiliateSummary = z
  .object({
    id: Uuid,
    firstName: z.string(),
    lastName: z.string(),
    email: z.string().email(),
  })
  .openapi('AffiliateSummary');

export const CodeStructure = z
  .object({
    firstName: z.boolean().optional(),
    lastName: z.boolean().optional(),
    emailLocalPart: z.boolean().optional(),
    discountAmount: z.boolean().optional(),
    couponName: z.boolean().optional(),
    randomChars: z.boolean().optional(),
  })
  .strict()
  .openapi('CodeStructure');

/** The code fields of POST /promotional-codes for a generated code, as a coupon keeps them to issue its affiliates' codes. */
export const AutoCouponRule = z
  .object({
    prefix: z.string().max(20).optional(),
    codeStructure: CodeStructure,
    randomCharsLength: z.number().int().min(1).max(32).optional(),
    randomCharsCase: z.enum(['uppercase', 'lowercase', 'mixed']).optional(),
    appliesTo: z.enum(['NEW_AFFILIATES', 'ALL_AFFILIATES']).openapi({
      description:
        'NEW_AFFILIATES: each affiliate created from now on gets its code once it is ACTIVE; ALL_AFFILIATES: also every affiliate ACTIVE when the rule is set',
    }),
  })
  .strict()
  .superRefine((rule, ctx) => {
    // A rule is applied later, to affiliates nobody reviews one by one: one that can produce no code at all is refused when set.
    const parts = Object.values(rule.codeStructure).some(Boolean);
    const prefix = /[A-Za-z0-9_-]/.test((rule.prefix ?? '').normalize('NFKD'));
    if (!parts && !prefix) {
      ctx.addIssue({ code: 'custom', path: ['codeStructure'], message: 'autoCouponRule: enable at least one codeStructure part or give a prefix with letters or digits (randomChars is advised)' });
    }
  })
  .openapi('AutoCouponRule', {
    description:
      "Issues one generated code of this coupon to each affiliate that becomes ACTIVE, once per coupon and affiliate (retries, concurrent approvals and restarts issue no second one); parts as POST /promotional-codes' auto-generation",
  });
export type AutoCouponRule = z.infer<typeof AutoCouponRule>;

const couponFields = {
  id: Uuid,
  name: z.string().nullable(),
  externalId: z.string().nullable(),
  couponType: CouponType,
  percentOff: z.number().nullable(),
  amountOff: z.number().nullable(),
  currency: z.string().nullable(),
  duration: CouponDuration,
  durationInMonths: z.number().int().nullable(),
  maxRedemptions: z.number().int().nullable(),
  timesRedeemed: z.number().int(),
  couponCategory: CouponCategory,
  limitToProducts: z.boolean(),
  productIds: z.array(z.string()),
  collectionIds: z.array(z.string()),
  valid: z.boolean(),
  redeemBy: DateTime.nullable(),
  integrationType: NullableIntegrationType,
  affiliateProgramId: Uuid,
  metadata: z.record(z.string()),
  createdAt: DateTime,
  updatedAt: DateTime,
  // A union, not .nullable(): the OpenAPI generator drops nullability on a referenced schema.
  autoCouponRule: z.union([AutoCouponRule, z.null()]),
  autoCouponRuleProgress: z
    .object({ issued: z.number().int().openapi({ description: 'Codes issued so far by this run (an affiliate whose own affiliate.created or affiliate.updated issued its code first is not counted again)' }), done: z.boolean().openapi({ description: 'true: every affiliate ACTIVE when the rule was set has its code' }) })
    .optional()
    .openapi({
      description:
        'Only with an ALL_AFFILIATES rule: the codes of the affiliates ACTIVE when it was set are issued in the background after the POST or PUT /coupons that set it answers; read the coupon again to follow',
    }),
};

/** A coupon without its codes: the shape embedded in a promotional code's `coupon`. */
export const CouponSummary = z.object(couponFields).openapi('CouponSummary');

const promotionalCodeFields = {
  id: Uuid,
  code: z.string(),
  couponId: Uuid,
  affiliateId: Uuid.nullable(),
  externalId: z.string().nullable(),
  active: z.boolean(),
  expiresAt: DateTime.nullable(),
  maxRedemptions: z.number().int().nullable(),
  timesRedeemed: z.number().int(),
  firstTimeOrder: z.boolean(),
  minimumAmount: z.number().nullable(),
  minimumAmountCurrency: z.string().nullable(),
  limitToCustomers: z.boolean(),
  customerId: z.string().nullable(),
  limitToAffiliate: z.boolean(),
  isAutoGenerated: z.boolean(),
  isAffiliateGenerated: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
  // A union, not .nullable(): the OpenAPI generator drops nullability on a referenced schema.
  affiliate: z.union([AffiliateSummary, z.null()]),
};

/** A promotional code as listed inside its coupon: the parent is not repeated inside it. */
export const PromotionalCodeSummary = z.object(promotionalCodeFields).openapi('PromotionalCodeSummary');

export const PromotionalCode = z
  .object({ ...promotionalCodeFields, coupon: CouponSummary })
  .openapi('PromotionalCode');

export const Coupon = z
  .object({ ...couponFields, promotionalCodes: z.array(PromotionalCodeSummary) })
  .openapi('Coupon');

export const CreateCouponBody = z
  .object({
    name: ShortText,
    couponType: CouponType.default('PERCENTAGE'),
    percentOff: z.number().finite().optional(),
    amountOff: z.number().finite().positive().max(1e9).optional(),
    currency: Currency.optional(),
    duration: CouponDuration.default('forever'),
    durationInMonths: z.number().int().min(1).max(1200).optional(),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional(),
    limitToProducts: z.boolean().default(false),
    productIds: ProductIds.default([]),
    collectionIds: ProductIds.default([]),
    valid: z.boolean().default(true),
    redeemBy: DateTime.nullable().optional(),
    externalId: ShortText.nullable().optional(),
    integrationType: IntegrationType.default('NONE'),
    couponCategory: CouponCategory.default('CUSTOMER'),
    metadata: Metadata.optional(),
    autoCouponRule: AutoCouponRule.nullable().optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.couponType === 'PERCENTAGE') {
      if (body.percentOff === undefined) {
        ctx.addIssue({ code: 'custom', path: ['percentOff'], message: 'percentOff is required when couponType is PERCENTAGE' });
      } else if (body.percentOff < 1 || body.percentOff > 100) {
        ctx.addIssue({ code: 'custom', path: ['percentOff'], message: 'percentOff must be between 1 and 100' });
      }
    }
    if (body.couponType === 'FLAT') {
      if (body.amountOff === undefined) {
        ctx.addIssue({ code: 'custom', path: ['amountOff'], message: 'amountOff is required when couponType is FLAT' });
      }
      if (body.currency === undefined) {
        ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency is required when couponType is FLAT' });
      }
    }
    if (body.duration === 'repeating' && body.durationInMonths === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['durationInMonths'],
        message: 'durationInMonths is required when duration is repeating',
      });
    }
  })
  .openapi('CreateCouponBody');

/** The discount itself is immutable, as in Stripe: only these fields may change. */
export const UpdateCouponBody = z
  .object({
    couponId: Uuid,
    name: ShortText.optional(),
    valid: z.boolean().optional(),
    redeemBy: DateTime.nullable().optional(),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional(),
    productIds: ProductIds.optional(),
    limitToProducts: z.boolean().optional(),
    collectionIds: ProductIds.optional(),
    externalId: ShortText.nullable().optional(),
    metadata: Metadata.optional(),
    autoCouponRule: AutoCouponRule.nullable().optional().openapi({ description: 'null: stop issuing codes (codes issued stay)' }),
  })
  .strict()
  .openapi('UpdateCouponBody');

export const DeleteCouponBody = z.object({ couponId: Uuid }).strict().openapi('DeleteCouponBody');

export const DeleteCouponResponse = z
  .object({ message: z.string(), deletedCoupon: z.object({ id: Uuid, name: z.string().nullable() }) })
  .openapi('DeleteCouponResponse');

export const CouponQuery = ListQuery.extend({
  id: z.string().max(100).optional(),
  name: z.string().max(200).optional(),
  externalId: z.string().max(200).optional(),
  ...dateRange('createdAt', 'creation'),
}).strict();



/** Characters a customer can type at checkout; auto-generated parts are stripped to these. */
export const PROMOTIONAL_CODE_PATTERN = /^[A-Za-z0-9_-]+$/;
export const PromotionalCodeString = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(PROMOTIONAL_CODE_PATTERN, 'code can only contain letters, numbers, hyphens and underscores');

export const RANDOM_CHARS_LENGTH = { min: 1, max: 32, default: 6 } as const;

export const CreatePromotionalCodeBody = z
  .object({
    couponId: Uuid,
    code: PromotionalCodeString.optional(),
    affiliateId: Uuid.optional(),
    affiliateEmail: Email.optional(),
    externalId: ShortText.nullable().optional(),
    active: z.boolean().default(true),
    limitToAffiliate: z.boolean().default(false),
    firstTimeOrder: z.boolean().default(false),
    minimumAmount: z.number().finite().nonnegative().max(1e12).nullable().optional(),
    minimumAmountCurrency: Currency.nullable().optional(),
    limitToCustomers: z.boolean().default(false),
    customerId: ShortText.nullable().optional(),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional(),
    expiresAt: DateTime.nullable().optional(),
    isAutoGenerated: z.boolean().default(false),
    isAffiliateGenerated: z.boolean().default(false),
    prefix: z.string().max(20).optional(),
    codeStructure: CodeStructure.optional(),
    randomCharsLength: z.number().int().min(RANDOM_CHARS_LENGTH.min).max(RANDOM_CHARS_LENGTH.max).optional(),
    randomCharsCase: z.enum(['uppercase', 'lowercase', 'mixed']).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.isAutoGenerated) {
      if (body.code !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['code'], message: 'code must not be sent when isAutoGenerated is true' });
      }
      if (body.affiliateId === undefined && body.affiliateEmail === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['affiliateId'],
          message: 'affiliateId or affiliateEmail is required when isAutoGenerated is true',
        });
      }
      if (body.codeStructure === undefined) {
        ctx.addIssue({ code: 'custom', path: ['codeStructure'], message: 'codeStructure is required when isAutoGenerated is true' });
      }
    } else if (body.code === undefined) {
      ctx.addIssue({ code: 'custom', path: ['code'], message: 'code is required unless isAutoGenerated is true' });
    }
    if (body.limitToCustomers && !body.customerId) {
      ctx.addIssue({ code: 'custom', path: ['customerId'], message: 'customerId is required when limitToCustomers is true' });
    }
    if (body.minimumAmount != null && body.minimumAmountCurrency == null) {
      ctx.addIssue({
        code: 'custom',
        path: ['minimumAmountCurrency'],
        message: 'minimumAmountCurrency is required with minimumAmount',
      });
    }
  })
  .openapi('CreatePromotionalCodeBody');

export const UpdatePromotionalCodeBody = z
  .object({
    promotionalCodeId: Uuid,
    active: z.boolean().optional(),
    expiresAt: DateTime.nullable().optional(),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional(),
    affiliateId: Uuid.nullable().optional(),
    affiliateEmail: Email.optional(),
    limitToAffiliate: z.boolean().optional(),
    firstTimeOrder: z.boolean().optional(),
    minimumAmount: z.number().finite().nonnegative().max(1e12).nullable().optional(),
    minimumAmountCurrency: Currency.nullable().optional(),
    customerId: ShortText.nullable().optional(),
    limitToCustomers: z.boolean().optional(),
    externalId: ShortText.nullable().optional(),
  })
  .strict()
  .openapi('UpdatePromotionalCodeBody');

export const DeletePromotionalCodeBody = z
  .object({ promotionalCodeId: Uuid })
  .strict()
  .openapi('DeletePromotionalCodeBody');

export const PromotionalCodeQuery = ListQuery.extend({
  id: z.string().max(100).optional(),
  code: z.string().max(100).optional(),
  externalId: z.string().max(200).optional(),
  couponId: z.string().max(100).optional(),
  affiliateId: z.string().max(100).optional(),
  affiliateEmail: z.string().max(254).optional(),
  ...dateRange('createdAt', 'creation'),
}).strict();

/** Internal: the sale service asks the coupon service to redeem a code for one sale. */
export const RedeemPromotionalCodeBody = z
  .object({
    code: z.string().min(1).max(100),
    /** Identifies the sale: the same key redeems once, however often it is retried. */
    redemptionKey: z.string().min(1).max(200),
    totalEarned: Amount,
    currency: Currency.optional(),
    customerId: z.string().max(200).nullable().optional(),
    firstTimeOrder: z.boolean().optional(),
    productIds: z.array(z.string().max(200)).max(500).optional(),
    affiliateId: Uuid.optional(),
  })
  .strict();

export const Redemption = z.object({
  redemptionKey: z.string(),
  promotionalCodeId: Uuid,
  couponId: Uuid,
  affiliateId: Uuid,
  code: z.string(),
});

export const ReleaseRedemptionBody = z.object({ redemptionKey: z.string().min(1).max(200) }).strict();


export type Coupon = z.infer<typeof Coupon>;
export type CouponSummary = z.infer<typeof CouponSummary>;
export type PromotionalCode = z.infer<typeof PromotionalCode>;
export type PromotionalCodeSummary = z.infer<typeof PromotionalCodeSummary>;
export type AffiliateSummary = z.infer<typeof AffiliateSummary>;
export type CreateCouponBody = z.infer<typeof CreateCouponBody>;
export type UpdateCouponBody = z.infer<typeof UpdateCouponBody>;
export type CreatePromotionalCodeBody = z.infer<typeof CreatePromotionalCodeBody>;
export type UpdatePromotionalCodeBody = z.infer<typeof UpdatePromotionalCodeBody>;
export type RedeemPromotionalCodeBody = z.infer<typeof RedeemPromotionalCodeBody>;
export type Redemption = z.infer<typeof Redemption>;

/** The most affiliates one bulk request names, or one page of `allActive` covers. */
export const BULK_ISSUE_PAGE = 100;

export const BulkIssueBody = z
  .object({
    couponId: Uuid,
    affiliateIds: z.array(Uuid).min(1).max(BULK_ISSUE_PAGE).optional(),
    allActive: z.literal(true).optional(),
    startingAfter: Uuid.optional().openapi({ description: "With allActive: the previous page's nextStartingAfter" }),
    prefix: z.string().max(20).optional(),
    codeStructure: CodeStructure.optional().openapi({ description: "The code's parts; absent: the coupon's autoCouponRule" }),
    randomCharsLength: z.number().int().min(RANDOM_CHARS_LENGTH.min).max(RANDOM_CHARS_LENGTH.max).optional(),
    randomCharsCase: z.enum(['uppercase', 'lowercase', 'mixed']).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.affiliateIds === undefined) === (body.allActive === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['affiliateIds'], message: 'send either affiliateIds or allActive: true' });
    }
    if (body.startingAfter !== undefined && !body.allActive) {
      ctx.addIssue({ code: 'custom', path: ['startingAfter'], message: 'startingAfter pages through allActive only' });
    }
  })
  .openapi('BulkIssueBody');
export type BulkIssueBody = z.infer<typeof BulkIssueBody>;

export const BulkIssueResult = z
  .object({
    issued: z.array(PromotionalCode).openapi({ description: 'Codes created by this request, each announced by promocode.created' }),
    alreadyIssued: z.array(Uuid).openapi({ description: 'Affiliates that already had their code of this coupon: nothing new for them' }),
    skipped: z.array(z.object({ affiliateId: Uuid, reason: z.string() })).openapi({ description: 'Affiliates given no code, and why (not ACTIVE, not found, the generated code taken)' }),
    nextStartingAfter: Uuid.nullable().openapi({ description: 'With allActive: send it as startingAfter for the next page; null: that was the last' }),
  })
  .openapi('BulkIssueResult');
export type BulkIssueResult = z.infer<typeof BulkIssueResult>;
