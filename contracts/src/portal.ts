import { PayoutDetailsBody, type PayoutDetails } from './commission';
import { DateTime, httpUrl, QueryInteger, Uuid } from './common';
import { PromotionalCodeString } from './coupon';
import { z } from './zod';

/** How long the link of a portal session can be opened, and how long the session it opens lasts (issue 30). */
export const PORTAL_LINK_TTL_SECONDS = 10 * 60;
export const PORTAL_SESSION_TTL_SECONDS = 12 * 60 * 60;

/** The affiliate statuses whose affiliate may open a portal: a pending, rejected or disabled one may not. */
export const PORTAL_AFFILIATE_STATUSES = ['ACTIVE'] as const;

const ReturnUrl = httpUrl('returnUrl');

export const CreatePortalSessionBody = z
  .object({
    affiliateId: Uuid.openapi({ description: 'The ACTIVE affiliate the portal is for' }),
    returnUrl: ReturnUrl.optional().openapi({
      description: 'Where the portal\'s "Back" link and an expired link\'s page send the affiliate (your site)',
    }),
  })
  .strict()
  .openapi('CreatePortalSessionBody');

export const PortalSession = z
  .object({
    id: Uuid.openapi({ description: 'The session: revoke it with DELETE /affiliate-portal-sessions {affiliatePortalSessionId}' }),
    affiliateId: Uuid.openapi({ description: 'The affiliate the portal is for' }),
    url: z.string().optional().openapi({
      description:
        'Send the affiliate here: it opens the portal once, within expiresAt, then the link is spent. Always in the first answer; absent from a replay (Idempotent-Replayed: true), as the link is never stored: make a new session',
    }),
    expiresAt: DateTime.openapi({ description: 'The link can be opened until then (10 minutes); the session it opens lasts 12 hours' }),
    returnUrl: z.string().nullable().openapi({ description: 'Where the portal sends the affiliate back; null: no Back link' }),
  })
  .openapi('PortalSession', {
    description: "A single-use link into the affiliate portal, as Stripe's customer portal sessions; only a hash of its token is stored.",
  });

export const RevokePortalSessionsBody = z
  .object({
    affiliatePortalSessionId: Uuid.optional().openapi({ description: 'One session (its link and, once opened, its cookie)' }),
    affiliateId: Uuid.optional().openapi({ description: 'Every session of this affiliate' }),
  })
  .strict()
  .refine((body) => (body.affiliatePortalSessionId === undefined) !== (body.affiliateId === undefined), {
    path: ['affiliatePortalSessionId'],
    message: 'send exactly one of affiliatePortalSessionId and affiliateId',
  })
  .openapi('RevokePortalSessionsBody');

export const RevokedPortalSessions = z
  .object({ revoked: z.number().int().openapi({ description: 'Sessions that were live and are now revoked' }) })
  .openapi('RevokedPortalSessions');

/** What the portal itself sends (under /portal/api, with the session cookie and its CSRF token): never an affiliate or program id. */
export const PortalPayoutDetailsBody = z.object({ payoutDetails: PayoutDetailsBody }).strict();
export const PortalLinkBody = z.object({ link: z.string().min(1).max(100) }).strict();
export const PortalCodeBody = z.object({ couponId: Uuid, code: PromotionalCodeString }).strict();

export type CreatePortalSessionBody = z.infer<typeof CreatePortalSessionBody>;
export type PortalSession = z.infer<typeof PortalSession>;

/** Internal (sale service): one affiliate's statement per currency, for its portal. */
export const AffiliateBalancesQuery = z.object({ affiliateId: Uuid }).strict();

/** Internal (affiliate service): one affiliate's activity per UTC day, for its portal's charts. */
export const DailyActivityQuery = z.object({ affiliateId: Uuid, days: QueryInteger.min(1).max(90).default(30) }).strict();
export const DailyActivity = z.object({ day: z.string(), clicks: z.number().int(), referrals: z.number().int(), sales: z.number().int() });
export type DailyActivity = z.infer<typeof DailyActivity>;

/**
 * What /portal/api answers (the portal's page and the gateway share these shapes): narrower than
 * the program's API, nothing of other affiliates, no risk signals, customers' addresses masked.
 */
export type PortalCoupon = {
  id: string;
  name: string | null;
  couponType: string;
  percentOff: number | null;
  amountOff: number | null;
  currency: string | null;
  duration: string;
};
export type PortalSessionInfo = {
  affiliate: { id: string; firstName: string; lastName: string; email: string; payoutDetails: PayoutDetails | null };
  program: { name: string; affiliatesMayAddLinks: boolean; coupons: PortalCoupon[] };
  csrfToken: string;
  returnUrl: string | null;
  expiresAt: string | null;
};
export type PortalLink = {
  id: string;
  link: string;
  clicks: number;
  referrals: number;
  sales: number;
  revenueByCurrency: Record<string, number>;
  fullURLs: { baseUrl: string; fullUrl: string }[];
};
export type PortalReferral = { id: string; email: string; status: string; createdAt: string };
export type PortalSale = {
  id: string;
  paidAt: string;
  totalEarned: number;
  currency: string;
  commissionEarned: number;
  promoCode: string | null;
  commissionStatus: string | null;
};
export type PortalCommission = {
  id: string;
  saleId: string;
  amount: number;
  currency: string;
  status: string;
  availableAt: string;
  payoutId: string | null;
};
export type PortalPayout = { id: string; amount: number; currency: string; status: string; createdAt: string; paidAt: string | null };
export type PortalStatementRow = { currency: string; earned: number; pending: number; due: number; paid: number; balance: number };
export type PortalCode = {
  id: string;
  code: string;
  active: boolean;
  timesRedeemed: number;
  isAffiliateGenerated: boolean;
  coupon: Omit<PortalCoupon, 'duration'>;
};
