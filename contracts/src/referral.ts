import { AttributionReason, VisitorId } from './affiliate';
import { dateRange, DateTime, Email, ListFormat, ListQuery, ShortText, Uuid } from './common';
import { Risk } from './risk';
import { z } from './zod';

export const ReferralStatus = z.enum(['active', 'inactive']);

export const Referral = z
  .object({
    id: Uuid,
    affiliateId: Uuid,
    linkId: Uuid.nullable(),
    clickId: z.number().int().nullable(),
    email: z.string().email(),
    name: z.string().nullable(),
    referredUserExternalId: z.string().nullable(),
    plan: z.string().nullable(),
    status: ReferralStatus,
    // A union, not .nullable(): the generator would publish a bare $ref without null.
    attribution: z.union([AttributionReason, z.null()]).openapi({ description: 'How the referral was attributed to its affiliate; null on referrals made before this was recorded' }),
    risk: Risk.openapi({ description: "The risk signals found when the referral was made and the strongest action of the program's riskActions among them; the commissions of its sales follow that action" }),
    programId: Uuid,
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .openapi('Referral');

export const CreateReferralBody = z
  .object({
    clickId: z.number().int().nonnegative().optional(),
    visitorId: VisitorId.optional().openapi({
      description: "The visitor's id as sent with their clicks: the referral goes to the click the program's attributionModel picks among those within the attribution window",
    }),
    link: z.string().max(100).optional(),
    affiliateId: Uuid.optional(),
    affiliateEmail: Email.optional(),
    email: Email,
    name: ShortText.optional(),
    referredUserExternalId: ShortText.optional(),
    plan: ShortText.optional(),
    status: ReferralStatus.default('active'),
  })
  .strict()
  .refine(
    (body) => [body.clickId, body.visitorId, body.link, body.affiliateId, body.affiliateEmail].some((value) => value !== undefined),
    { path: ['clickId'], message: 'one of clickId, link, affiliateId or affiliateEmail is required' },
  )
  .openapi('CreateReferralBody');

export const UpdateReferralBody = z
  .object({
    referralId: Uuid,
    name: ShortText.optional(),
    email: Email.optional(),
    referredUserExternalId: ShortText.optional(),
    plan: ShortText.optional(),
    status: ReferralStatus.optional(),
  })
  .strict()
  .openapi('UpdateReferralBody');

export const DeleteReferralBody = z.object({ referralId: Uuid }).strict().openapi('DeleteReferralBody');

export const ReferralQuery = ListQuery.extend({
  id: z.string().max(100).optional(),
  email: z.string().max(254).optional(),
  affiliateId: z.string().max(100).optional(),
  referredUserExternalId: z.string().max(200).optional(),
  status: ReferralStatus.optional(),
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
  .object({ affiliateId: z.string().min(1).max(100), email: z.string().min(1).max(254).optional(), customerId: z.string().min(1).max(200).optional() })
  .strict();
export const CustomerClaimAnswer = z.object({ claim: z.object({ customerKey: z.string(), affiliateId: z.string(), source: z.string() }).nullable() });

export type Referral = z.infer<typeof Referral>;
export type CreateReferralBody = z.infer<typeof CreateReferralBody>;
export type UpdateReferralBody = z.infer<typeof UpdateReferralBody>;
