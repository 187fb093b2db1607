import { ClickNotCountedReason, VisitorId } from './affiliate';
import { Email, ShortText } from './common';
import { AttributionModel } from './program';
import { z } from './zod';

/**
 * What a publishable key may send from a browser (DESIGN.md §11). The gateway adds the visitor's
 * address and user agent itself, so a page can never claim someone else's.
 */
export const BrowserClickBody = z
  .object({
    link: z.string().min(1).max(100),
    visitorId: VisitorId.optional(),
    landingUrl: z.string().url().max(2000).optional(),
    referrer: z.string().url().max(2000).optional(),
  })
  .strict()
  .openapi('BrowserClickBody');

/** A browser learns whether its click counted, never which affiliate it belongs to. */
export const BrowserClick = z
  .object({
    clickId: z.number().int().nullable(),
    counted: z.boolean(),
    // A union, not .nullable(): the 3.1 generator would keep null out of the enum.
    reason: z.union([ClickNotCountedReason, z.null()]),
    attributionWindowDays: z.number().int().nullable().openapi({ description: 'How long to keep the click id (the cookie lifetime); null: clicks never expire' }),
    // Which click the program credits: under FIRST_CLICK a page keeps an earlier live click id rather than this one.
    // (No description here: on a referenced enum it would become an allOf that client generators refuse.)
    attributionModel: AttributionModel,
  })
  .openapi('BrowserClick');

export const BrowserReferralBody = z
  .object({
    clickId: z.number().int().nonnegative().optional(),
    visitorId: VisitorId.optional(),
    email: Email,
    name: ShortText.optional(),
    externalId: ShortText.optional().openapi({ description: "The customer's id in your system (the referral's referredUserExternalId)" }),
  })
  .strict()
  .refine((body) => body.clickId !== undefined || body.visitorId !== undefined, { path: ['clickId'], message: 'clickId or visitorId is required' })
  .openapi('BrowserReferralBody');

/** A referral made from a browser answers only this: nothing about affiliates or other customers. */
export const BrowserReferral = z.object({ ok: z.literal(true), referralId: z.string() }).openapi('BrowserReferral');

export type BrowserClickBody = z.infer<typeof BrowserClickBody>;
export type BrowserReferralBody = z.infer<typeof BrowserReferralBody>;
export type BrowserClick = z.infer<typeof BrowserClick>;
