import { AttributionReason, VisitorId } from './affiliate';
import { dateRange, DateTime, Email, ListFormat, ListQuery, ShortText, Uuid } from './common';
import { Risk } from './risk';
import { z } from './zod';

export const ReferralStatus = z.enum(['active', 'inactive']);
const REFERRAL_STATUS = "The customer's state as you report it, e.g. their subscription: active or inactive";

export const Referral = z
  .object({
    id: Uuid.openapi({ description: "The referral's id" }),
    affiliateId: Uuid.openapi({ description: 'The affiliate the customer is attributed to' }),
    linkId: Uuid.nullable().openapi({
      description: 'The link it came through; null when attributed otherwise (affiliateId, affiliateEmail)',
    }),
    clickId: z.number().int().nullable().openapi({ description: 'The click it came from; null when none' }),
    email: z.string().email().openapi({ description: "The customer's email" }),
    name: z.string().nullable().openapi({ description: "The customer's name" }),
    referredUserExternalId: z
      .string()
      .nullable()
      .openapi({ description: "The customer's id in your system (a user id, a billing-provider customer id)" }),
    plan: z.string().nullable().openapi({ description: "The customer's plan, as you name it" }),
    status: ReferralStatus.openapi({ description: REFERRAL_STATUS }),
    // A union, not .nullable(): the generator would publish a bare $ref without null.
    attribution: z
      .union([AttributionReason, z.null()])
      .openapi({ description: 'How the referral was attributed to its affiliate; null on referrals made before this was recorded' }),
    risk: Risk.openapi({
      description:
        "The risk signals found when the referral was made and the strongest action of the program's riskActions among them; the commissions of its sales follow that action",
    }),
    programId: Uuid.openapi({ description: 'The program' }),
    createdAt: DateTime.openapi({ description: 'When the referral was made' }),
    updatedAt: DateTime.openapi({ description: 'When it last changed' }),
  })
  .openapi('Referral', { description: 'A customer identified as referred by an affiliate' });

export const CreateReferralBody = z
  .object({
    clickId: z.number().int().nonnegative().optional().openapi({
      description:
        "The visitor's click (from POST /clicks or the tracking script): the referral goes to its affiliate, within the attribution window",
    }),
    visitorId: VisitorId.optional().openapi({
      description:
        "The visitor's id as sent with their clicks: the referral goes to the click the program's attributionModel picks among those within the attribution window",
    }),
    link: z.string().max(100).optional().openapi({ description: "A link's slug: the referral goes to its affiliate" }),
    affiliateId: Uuid.optional().openapi({ description: 'The affiliate, named directly' }),
    affiliateEmail: Email.optional().openapi({ description: 'The affiliate, by email' }),
    email: Email.openapi({ description: "The customer's email" }),
    name: ShortText.optional().openapi({ description: "The customer's name" }),
    referredUserExternalId: ShortText.optional().openapi({
      description: "The customer's id in your system (a user id, a billing-provider customer id)",
    }),
    plan: ShortText.optional().openapi({ description: "The customer's plan, as you name it" }),
    status: ReferralStatus.default('active').openapi({ description: `${REFERRAL_STATUS} (default active)` }),
  })
  .strict()
  .refine((body) => [body.clickId, body.visitorId, body.link, body.affiliateId, body.affiliateEmail].some((value) => value !== undefined), {
    path: ['clickId'],
    message: 'one of clickId, link, affiliateId or affiliateEmail is required',
  })
  .openapi('CreateReferralBody');

export const UpdateReferralBody = z
  .object({
    referralId: Uuid.openapi({ description: 'The referral to change' }),
    name: ShortText.optional().openapi({ description: "The customer's name" }),
    email: Email.optional().openapi({ description: "The customer's email" }),
    referredUserExternalId: ShortText.optional().openapi({ description: "The customer's id in your system" }),
    plan: ShortText.optional().openapi({ description: "The customer's plan" }),
    status: ReferralStatus.optional().openapi({ description: REFERRAL_STATUS }),
  })
  .strict()
  .openapi('UpdateReferralBody');

export const DeleteReferralBody = z
  .object({ referralId: Uuid.openapi({ description: 'The referral to delete' }) })
  .strict()
  .openapi('DeleteReferralBody');

export const ReferralQuery = ListQuery.extend({
  id: z.string().max(100).optional().openapi({ description: 'A referral id: that referral' }),
  email: z.string().max(254).optional().openapi({ description: "A customer's email: their referrals" }),
  affiliateId: z.string().max(100).optional().openapi({ description: 'An affiliate id: its referrals' }),
  referredUserExternalId: z.string().max(200).optional().openapi({ description: "Your customer id: that customer's referrals" }),
  status: ReferralStatus.optional().openapi({ description: 'Only referrals of this status' }),
  ...dateRange('createdAt', 'creation'),
  format: ListFormat,
}).strict();

/**
 * Internal read API of the referral service (never exposed through the gateway), used by the sale
 * service for CUSTOMER_OF_ANOTHER_AFFILIATE:
 *   GET /internal/customer-claims?affiliateId=<id>&email=<email>&customerId=<id>
 *     → 200 { claim }: the first of the customer's keys (normalized email, external id) the referral
 *       service gave to another affiliate than this one, or null
 */
export const CustomerClaimQuery = z
  .object({
    affiliateId: z.string().min(1).max(100),
    email: z.string().min(1).max(254).optional(),
    customerId: z.string().min(1).max(200).optional(),
  })
  .strict();
export const CustomerClaimAnswer = z.object({
  claim: z.object({ customerKey: z.string(), affiliateId: z.string(), source: z.string() }).nullable(),
});

export type Referral = z.infer<typeof Referral>;
export type CreateReferralBody = z.infer<typeof CreateReferralBody>;
export type UpdateReferralBody = z.infer<typeof UpdateReferralBody>;
