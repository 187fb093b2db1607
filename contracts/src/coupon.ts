import { Amount, Currency, dateRange, DateTime, Email, ListQuery, Metadata, ShortText, Uuid } from './common';
import { z } from './zod';

export const CouponType = z.enum(['PERCENTAGE', 'FLAT']);
export const CouponDuration = z.enum(['once', 'forever', 'repeating']);
export const CouponCategory = z.enum(['CUSTOMER', 'PAYOUT']);

const COUPON_TYPE = 'PERCENTAGE: percentOff comes off; FLAT: amountOff in currency comes off';
const COUPON_DURATION =
  "How long the discount applies to a customer's subscription: once (the first payment), forever, or repeating (for durationInMonths months)";
const COUPON_CATEGORY = 'CUSTOMER: a discount for customers; PAYOUT: a non-cash reward used to pay affiliates';
const INTEGRATION_TYPE = 'The billing provider the coupon is synced with (NONE: none); recorded only, nothing is created at the provider';
const PRODUCT_IDS = 'The products the coupon is restricted to when limitToProducts is true (ids in your catalogue, at most 500)';
const COLLECTION_IDS = 'The product collections the coupon is restricted to (ids in your catalogue, at most 500)';
const METADATA = 'Your own key-value pairs, returned as stored: at most 50 keys of up to 40 characters, values of up to 500';
const COUPON_MAX_REDEMPTIONS = 'Redemptions allowed across all codes of this coupon; null: unlimited';
const CODE_MAX_REDEMPTIONS = "Redemptions allowed for this code; null: unlimited. The coupon's own maxRedemptions caps it too";
const MINIMUM_AMOUNT =
  'The smallest order total (totalEarned of the sale, in minimumAmountCurrency) the code may be redeemed on; null: no minimum';
const CUSTOMER_ID = 'The customer (the customerId sent with the sale) the code is limited to when limitToCustomers is true';
/** NONE plus the seven billing providers the spec describes by kind. */
export const IntegrationType = z.enum(['NONE', 'STRIPE', 'CHARGEBEE', 'PADDLE', 'SHOPIFY', 'WOOCOMMERCE', 'RECURLY', 'BRAINTREE']);
/** Nullable with null among the enum values, so validators accept the null the specification allows. */
const NullableIntegrationType = IntegrationType.nullable().openapi({ enum: [...IntegrationType.options, null] });

const ProductIds = z.array(ShortText).max(500);

export const AffiliateSummary = z
  .object({
    id: Uuid.openapi({ description: "The affiliate's id" }),
    firstName: z.string().openapi({ description: "The affiliate's first name" }),
    lastName: z.string().openapi({ description: "The affiliate's last name" }),
    email: z.string().email().openapi({ description: "The affiliate's email address" }),
  })
  .openapi('AffiliateSummary', { description: 'The affiliate a code is assigned to, as the code shows it' });

export const CodeStructure = z
  .object({
    firstName: z.boolean().optional().openapi({ description: "Include the affiliate's first name" }),
    lastName: z.boolean().optional().openapi({ description: "Include the affiliate's last name" }),
    emailLocalPart: z.boolean().optional().openapi({ description: "Include the part of the affiliate's email before the @" }),
    discountAmount: z
      .boolean()
      .optional()
      .openapi({ description: "Include the coupon's discount value (percentOff or amountOff, e.g. 20)" }),
    couponName: z.boolean().optional().openapi({ description: "Include the coupon's name" }),
    randomChars: z.boolean().optional().openapi({
      description: 'Include randomCharsLength random characters (advised when generating many codes: a taken code is refused, not retried)',
    }),
  })
  .strict()
  .openapi('CodeStructure', {
    description:
      'The parts of a generated code, joined in this fixed order after the prefix and upper-cased (except the random part, by randomCharsCase); characters other than letters, digits, hyphens and underscores are dropped. Parts left out or false are not used',
  });

/** The code fields of POST /promotional-codes for a generated code, as a coupon keeps them to issue its affiliates' codes. */
export const AutoCouponRule = z
  .object({
    prefix: z.string().max(20).optional().openapi({ description: 'Text at the start of every code (at most 20 characters)' }),
    codeStructure: CodeStructure,
    randomCharsLength: z
      .number()
      .int()
      .min(1)
      .max(32)
      .optional()
      .openapi({ description: 'Length of the random part, 1 to 32 (default 6)' }),
    randomCharsCase: z
      .enum(['uppercase', 'lowercase', 'mixed'])
      .optional()
      .openapi({ description: 'Letter case of the random part (default uppercase)' }),
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
      ctx.addIssue({
        code: 'custom',
        path: ['codeStructure'],
        message: 'autoCouponRule: enable at least one codeStructure part or give a prefix with letters or digits (randomChars is advised)',
      });
    }
  })
  .openapi('AutoCouponRule', {
    description:
      "Issues one generated code of this coupon to each affiliate that becomes ACTIVE, once per coupon and affiliate (retries, concurrent approvals and restarts issue no second one); parts as POST /promotional-codes' auto-generation",
  });
export type AutoCouponRule = z.infer<typeof AutoCouponRule>;

const couponFields = {
  id: Uuid.openapi({ description: "The coupon's id" }),
  name: z.string().nullable().openapi({ description: 'Internal name; also a lookup key of GET /coupons' }),
  externalId: z.string().nullable().openapi({ description: "The coupon's id at a connected billing provider; unique within the program" }),
  couponType: CouponType.openapi({ description: COUPON_TYPE }),
  percentOff: z.number().nullable().openapi({ description: 'Percentage off, 1 to 100, when couponType is PERCENTAGE; else null' }),
  amountOff: z
    .number()
    .nullable()
    .openapi({ description: 'Amount off in currency, as a decimal (10.5 is 10.50), when couponType is FLAT; else null' }),
  currency: z.string().nullable().openapi({ description: 'ISO 4217 code of amountOff (FLAT coupons); else null' }),
  duration: CouponDuration.openapi({ description: COUPON_DURATION }),
  durationInMonths: z.number().int().nullable().openapi({ description: 'Months the discount lasts when duration is repeating; else null' }),
  maxRedemptions: z.number().int().nullable().openapi({ description: COUPON_MAX_REDEMPTIONS }),
  timesRedeemed: z
    .number()
    .int()
    .openapi({ description: 'Redemptions so far across all its codes: each sale attributed by one of its codes counts one' }),
  couponCategory: CouponCategory.openapi({ description: COUPON_CATEGORY }),
  limitToProducts: z.boolean().openapi({ description: 'Whether the coupon applies only to productIds' }),
  productIds: z.array(z.string()).openapi({ description: PRODUCT_IDS }),
  collectionIds: z.array(z.string()).openapi({ description: COLLECTION_IDS }),
  valid: z.boolean().openapi({ description: 'Whether the coupon can currently be redeemed' }),
  redeemBy: DateTime.nullable().openapi({ description: 'Last moment the coupon can be redeemed; null: no end' }),
  integrationType: NullableIntegrationType.openapi({ description: INTEGRATION_TYPE }),
  affiliateProgramId: Uuid.openapi({ description: 'The program the coupon belongs to' }),
  metadata: z.record(z.string()).openapi({ description: METADATA }),
  createdAt: DateTime.openapi({ description: 'When the coupon was created' }),
  updatedAt: DateTime.openapi({ description: 'When the coupon last changed' }),
  // A union, not .nullable(): the OpenAPI generator drops nullability on a referenced schema.
  autoCouponRule: z
    .union([AutoCouponRule, z.null()])
    .openapi({ description: 'The rule that issues a code of this coupon to each affiliate that becomes ACTIVE; null: none' }),
  autoCouponRuleProgress: z
    .object({
      issued: z.number().int().openapi({
        description:
          'Codes issued so far by this run (an affiliate whose own affiliate.created or affiliate.updated issued its code first is not counted again)',
      }),
      done: z.boolean().openapi({ description: 'true: every affiliate ACTIVE when the rule was set has its code' }),
    })
    .optional()
    .openapi({
      description:
        'Only with an ALL_AFFILIATES rule: the codes of the affiliates ACTIVE when it was set are issued in the background after the POST or PUT /coupons that set it answers; read the coupon again to follow',
    }),
};

/** A coupon without its codes: the shape embedded in a promotional code's `coupon`. */
export const CouponSummary = z
  .object(couponFields)
  .openapi('CouponSummary', { description: "A coupon without its promotional codes: a code's parent coupon" });

const promotionalCodeFields = {
  id: Uuid.openapi({ description: "The code's id" }),
  code: z.string().openapi({ description: 'The string a customer types at checkout; unique across the program' }),
  couponId: Uuid.openapi({ description: 'The coupon the code takes its discount from' }),
  affiliateId: Uuid.nullable().openapi({
    description: 'The affiliate a sale with this code is attributed to; null: none (the code cannot attribute a sale)',
  }),
  externalId: z.string().nullable().openapi({ description: "The code's id at a billing provider" }),
  active: z.boolean().openapi({ description: 'Whether the code can be redeemed; false retires it without deleting it' }),
  expiresAt: DateTime.nullable().openapi({
    description: "When the code stops being redeemable, independent of the coupon's redeemBy; null: never",
  }),
  maxRedemptions: z.number().int().nullable().openapi({ description: CODE_MAX_REDEMPTIONS }),
  timesRedeemed: z.number().int().openapi({ description: 'Sales recorded with this code so far' }),
  firstTimeOrder: z
    .boolean()
    .openapi({ description: "Whether the code is limited to a customer's first order (firstTimeOrder of the sale)" }),
  minimumAmount: z.number().nullable().openapi({ description: MINIMUM_AMOUNT }),
  minimumAmountCurrency: z.string().nullable().openapi({ description: 'ISO 4217 code of minimumAmount' }),
  limitToCustomers: z.boolean().openapi({ description: 'Whether only customerId may redeem the code' }),
  customerId: z.string().nullable().openapi({ description: CUSTOMER_ID }),
  limitToAffiliate: z.boolean().openapi({ description: 'Whether only the assigned affiliate may redeem the code' }),
  isAutoGenerated: z.boolean().openapi({ description: 'Generated from a codeStructure rather than given by hand' }),
  isAffiliateGenerated: z.boolean().openapi({ description: 'Created by the affiliate in the affiliate portal' }),
  createdAt: DateTime.openapi({ description: 'When the code was created' }),
  updatedAt: DateTime.openapi({ description: 'When the code last changed' }),
  // A union, not .nullable(): the OpenAPI generator drops nullability on a referenced schema.
  affiliate: z.union([AffiliateSummary, z.null()]).openapi({ description: 'The assigned affiliate in brief; null: none' }),
};

/** A promotional code as listed inside its coupon: the parent is not repeated inside it. */
export const PromotionalCodeSummary = z
  .object(promotionalCodeFields)
  .openapi('PromotionalCodeSummary', { description: 'A promotional code without its parent coupon' });

export const PromotionalCode = z.object({ ...promotionalCodeFields, coupon: CouponSummary }).openapi('PromotionalCode', {
  description: 'The string a customer types at checkout: it gives the discount of its coupon and attributes the sale to its affiliate',
});

export const Coupon = z
  .object({ ...couponFields, promotionalCodes: z.array(PromotionalCodeSummary).openapi({ description: 'Every code of the coupon' }) })
  .openapi('Coupon', {
    description:
      'A discount definition: how much comes off, for how long and how often it can be redeemed. Customers use it through its promotional codes',
  });

export const CreateCouponBody = z
  .object({
    name: ShortText.openapi({ description: 'Internal name (1 to 200 characters, no line breaks)' }),
    couponType: CouponType.default('PERCENTAGE').openapi({
      description: `${COUPON_TYPE} (default PERCENTAGE, so percentOff is then required)`,
    }),
    percentOff: z.number().finite().optional().openapi({ description: 'Percentage off, 1 to 100: required when couponType is PERCENTAGE' }),
    amountOff: z
      .number()
      .finite()
      .positive()
      .max(1e9)
      .optional()
      .openapi({ description: 'Amount off in currency, as a decimal: required when couponType is FLAT' }),
    currency: Currency.optional().openapi({ description: 'ISO 4217 code of amountOff: required when couponType is FLAT' }),
    duration: CouponDuration.default('forever').openapi({ description: `${COUPON_DURATION} (default forever)` }),
    durationInMonths: z
      .number()
      .int()
      .min(1)
      .max(1200)
      .optional()
      .openapi({ description: 'Months the discount lasts, 1 to 1200: required when duration is repeating' }),
    maxRedemptions: z
      .number()
      .int()
      .min(1)
      .max(1e9)
      .nullable()
      .optional()
      .openapi({ description: `${COUPON_MAX_REDEMPTIONS} (default)` }),
    limitToProducts: z.boolean().default(false).openapi({ description: 'Restrict the coupon to productIds (default false)' }),
    productIds: ProductIds.default([]).openapi({ description: PRODUCT_IDS }),
    collectionIds: ProductIds.default([]).openapi({ description: COLLECTION_IDS }),
    valid: z.boolean().default(true).openapi({ description: 'Whether the coupon is redeemable straight away (default true)' }),
    redeemBy: DateTime.nullable().optional().openapi({ description: 'Last moment the coupon can be redeemed; absent or null: no end' }),
    externalId: ShortText.nullable()
      .optional()
      .openapi({ description: "The coupon's id at a billing provider; must be unique within the program (400 otherwise)" }),
    integrationType: IntegrationType.default('NONE').openapi({ description: `${INTEGRATION_TYPE} (default NONE)` }),
    couponCategory: CouponCategory.default('CUSTOMER').openapi({ description: `${COUPON_CATEGORY} (default CUSTOMER)` }),
    metadata: Metadata.optional().openapi({ description: METADATA }),
    autoCouponRule: AutoCouponRule.nullable()
      .optional()
      .openapi({ description: 'Issue a code of this coupon to each affiliate that becomes ACTIVE; absent or null: none' }),
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
    couponId: Uuid.openapi({ description: 'The coupon to change' }),
    name: ShortText.optional().openapi({ description: 'A new internal name' }),
    valid: z.boolean().optional().openapi({ description: 'false: no code of the coupon can be redeemed any more; true: redeemable again' }),
    redeemBy: DateTime.nullable().optional().openapi({ description: 'A new last moment of redemption; null: no end' }),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional().openapi({ description: COUPON_MAX_REDEMPTIONS }),
    productIds: ProductIds.optional().openapi({ description: `${PRODUCT_IDS}; replaces the list` }),
    limitToProducts: z.boolean().optional().openapi({ description: 'Whether the coupon applies only to productIds' }),
    collectionIds: ProductIds.optional().openapi({ description: `${COLLECTION_IDS}; replaces the list` }),
    externalId: ShortText.nullable()
      .optional()
      .openapi({ description: "The coupon's id at a billing provider, unique within the program; null clears it" }),
    metadata: Metadata.optional().openapi({ description: `${METADATA}; replaces the whole object` }),
    autoCouponRule: AutoCouponRule.nullable().optional().openapi({ description: 'null: stop issuing codes (codes issued stay)' }),
  })
  .strict()
  .openapi('UpdateCouponBody');

export const DeleteCouponBody = z
  .object({ couponId: Uuid.openapi({ description: 'The coupon to delete, with all its codes' }) })
  .strict()
  .openapi('DeleteCouponBody');

export const DeleteCouponResponse = z
  .object({
    message: z.string().openapi({ description: 'What was done, for people' }),
    deletedCoupon: z
      .object({
        id: Uuid.openapi({ description: "The deleted coupon's id" }),
        name: z.string().nullable().openapi({ description: "The deleted coupon's name" }),
      })
      .openapi({ description: 'The coupon deleted' }),
  })
  .openapi('DeleteCouponResponse');

export const CouponQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A coupon id: answers that one coupon' }),
  name: z.string().max(200).optional().openapi({ description: "A coupon's name: answers that coupon" }),
  externalId: z.string().max(200).optional().openapi({ description: "A coupon's externalId: answers that coupon" }),
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
    couponId: Uuid.openapi({ description: 'The coupon the code gives the discount of (404 when not in the program)' }),
    code: PromotionalCodeString.optional().openapi({
      description: 'The code, 1 to 64 letters, digits, hyphens and underscores, unique across the program: required unless isAutoGenerated',
    }),
    affiliateId: Uuid.optional().openapi({
      description: 'The affiliate sales with the code are attributed to (404 when not in the program)',
    }),
    affiliateEmail: Email.optional().openapi({ description: 'The affiliate by email, instead of affiliateId' }),
    externalId: ShortText.nullable().optional().openapi({ description: "The code's id at a billing provider" }),
    active: z.boolean().default(true).openapi({ description: 'Whether the code can be redeemed (default true)' }),
    limitToAffiliate: z.boolean().default(false).openapi({ description: 'Only the assigned affiliate may redeem it (default false)' }),
    firstTimeOrder: z.boolean().default(false).openapi({ description: "Limited to a customer's first order (default false)" }),
    minimumAmount: z
      .number()
      .finite()
      .nonnegative()
      .max(1e12)
      .nullable()
      .optional()
      .openapi({ description: `${MINIMUM_AMOUNT}; requires minimumAmountCurrency` }),
    minimumAmountCurrency: Currency.nullable().optional().openapi({ description: 'ISO 4217 code of minimumAmount' }),
    limitToCustomers: z
      .boolean()
      .default(false)
      .openapi({ description: 'Only customerId may redeem it (default false); requires customerId' }),
    customerId: ShortText.nullable().optional().openapi({ description: CUSTOMER_ID }),
    maxRedemptions: z
      .number()
      .int()
      .min(1)
      .max(1e9)
      .nullable()
      .optional()
      .openapi({ description: `${CODE_MAX_REDEMPTIONS} (default)` }),
    expiresAt: DateTime.nullable().optional().openapi({ description: 'When the code stops being redeemable; absent or null: never' }),
    isAutoGenerated: z.boolean().default(false).openapi({
      description: 'Generate the code from codeStructure (then an affiliate and codeStructure are required, and code must not be sent)',
    }),
    isAffiliateGenerated: z
      .boolean()
      .default(false)
      .openapi({ description: 'Mark the code as made by the affiliate (the affiliate portal sets it; default false)' }),
    prefix: z.string().max(20).optional().openapi({ description: 'For a generated code: text at its start (at most 20 characters)' }),
    codeStructure: CodeStructure.optional().openapi({ description: 'For a generated code: the parts it is made of' }),
    randomCharsLength: z
      .number()
      .int()
      .min(RANDOM_CHARS_LENGTH.min)
      .max(RANDOM_CHARS_LENGTH.max)
      .optional()
      .openapi({
        description: `For a generated code: length of the random part, ${RANDOM_CHARS_LENGTH.min} to ${RANDOM_CHARS_LENGTH.max} (default ${RANDOM_CHARS_LENGTH.default})`,
      }),
    randomCharsCase: z
      .enum(['uppercase', 'lowercase', 'mixed'])
      .optional()
      .openapi({ description: 'For a generated code: letter case of the random part (default uppercase)' }),
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
    promotionalCodeId: Uuid.openapi({ description: 'The code to change' }),
    active: z
      .boolean()
      .optional()
      .openapi({ description: 'false retires the code (no more redemptions) without deleting it; true makes it redeemable again' }),
    expiresAt: DateTime.nullable().optional().openapi({ description: 'When the code stops being redeemable; null: never' }),
    maxRedemptions: z.number().int().min(1).max(1e9).nullable().optional().openapi({ description: CODE_MAX_REDEMPTIONS }),
    affiliateId: Uuid.nullable().optional().openapi({ description: 'Assign the code to this affiliate; null: to none' }),
    affiliateEmail: Email.optional().openapi({ description: 'Assign the code to the affiliate with this email, instead of affiliateId' }),
    limitToAffiliate: z.boolean().optional().openapi({ description: 'Whether only the assigned affiliate may redeem it' }),
    firstTimeOrder: z.boolean().optional().openapi({ description: "Whether the code is limited to a customer's first order" }),
    minimumAmount: z.number().finite().nonnegative().max(1e12).nullable().optional().openapi({ description: MINIMUM_AMOUNT }),
    minimumAmountCurrency: Currency.nullable().optional().openapi({ description: 'ISO 4217 code of minimumAmount' }),
    customerId: ShortText.nullable().optional().openapi({ description: CUSTOMER_ID }),
    limitToCustomers: z.boolean().optional().openapi({ description: 'Whether only customerId may redeem it' }),
    externalId: ShortText.nullable().optional().openapi({ description: "The code's id at a billing provider; null clears it" }),
  })
  .strict()
  .openapi('UpdatePromotionalCodeBody');

export const DeletePromotionalCodeBody = z
  .object({ promotionalCodeId: Uuid.openapi({ description: 'The code to delete' }) })
  .strict()
  .openapi('DeletePromotionalCodeBody');

export const PromotionalCodeQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A code id: answers that one code' }),
  code: z.string().max(100).optional().openapi({ description: 'The code string: answers that one code' }),
  externalId: z.string().max(200).optional().openapi({ description: "A code's externalId: answers that code" }),
  couponId: z.string().max(100).optional().openapi({ description: 'A coupon id: every code of that coupon' }),
  affiliateId: z.string().max(100).optional().openapi({ description: 'An affiliate id: every code of that affiliate' }),
  affiliateEmail: z.string().max(254).optional().openapi({ description: "An affiliate's email: every code of that affiliate" }),
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
    couponId: Uuid.openapi({ description: 'The coupon whose codes are issued' }),
    affiliateIds: z
      .array(Uuid)
      .min(1)
      .max(BULK_ISSUE_PAGE)
      .optional()
      .openapi({ description: `The affiliates to give a code, 1 to ${BULK_ISSUE_PAGE}; or send allActive` }),
    allActive: z
      .literal(true)
      .optional()
      .openapi({ description: `Every ACTIVE affiliate, ${BULK_ISSUE_PAGE} per request (page with startingAfter); or send affiliateIds` }),
    startingAfter: Uuid.optional().openapi({ description: "With allActive: the previous page's nextStartingAfter" }),
    prefix: z
      .string()
      .max(20)
      .optional()
      .openapi({ description: "Text at the start of each code (at most 20 characters); absent: the autoCouponRule's" }),
    codeStructure: CodeStructure.optional().openapi({ description: "The code's parts; absent: the coupon's autoCouponRule" }),
    randomCharsLength: z
      .number()
      .int()
      .min(RANDOM_CHARS_LENGTH.min)
      .max(RANDOM_CHARS_LENGTH.max)
      .optional()
      .openapi({
        description: `Length of the random part, ${RANDOM_CHARS_LENGTH.min} to ${RANDOM_CHARS_LENGTH.max} (default ${RANDOM_CHARS_LENGTH.default})`,
      }),
    randomCharsCase: z
      .enum(['uppercase', 'lowercase', 'mixed'])
      .optional()
      .openapi({ description: 'Letter case of the random part (default uppercase)' }),
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
    skipped: z
      .array(
        z.object({
          affiliateId: Uuid.openapi({ description: 'The affiliate given no code' }),
          reason: z.string().openapi({ description: 'Why, for people' }),
        }),
      )
      .openapi({ description: 'Affiliates given no code, and why (not ACTIVE, not found, the generated code taken)' }),
    nextStartingAfter: Uuid.nullable().openapi({
      description: 'With allActive: send it as startingAfter for the next page; null: that was the last',
    }),
  })
  .openapi('BulkIssueResult');
export type BulkIssueResult = z.infer<typeof BulkIssueResult>;
