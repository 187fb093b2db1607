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
    link: z.string().min(1).max(100).openapi({ description: "The slug in the page's URL parameter" }),
    visitorId: VisitorId.optional().openapi({
      description:
        "The visitor's id kept in a first-party cookie: repeat clicks of one visitor on one link within clickDedupSeconds count once",
    }),
    landingUrl: z.string().url().max(2000).optional().openapi({ description: 'The page the visitor landed on' }),
    referrer: z.string().url().max(2000).optional().openapi({ description: 'The page the visitor came from' }),
  })
  .strict()
  .openapi('BrowserClickBody');

/** A browser learns whether its click counted, never which affiliate it belongs to. */
export const BrowserClick = z
  .object({
    clickId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The click's id, to send with the referral or sale (for a duplicate, the first click's); null for a bot" }),
    counted: z.boolean().openapi({ description: "Whether the click counts in the link's clicks" }),
    // A union, not .nullable(): the 3.1 generator would keep null out of the enum.
    reason: z
      .union([ClickNotCountedReason, z.null()])
      .openapi({ description: 'Why it was not counted: DUPLICATE or BOT; null when counted' }),
    attributionWindowDays: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'How long to keep the click id (the cookie lifetime); null: clicks never expire' }),
    // Which click the program credits: under FIRST_CLICK a page keeps an earlier live click id rather than this one.
    // (No description here: on a referenced enum it would become an allOf that client generators refuse.)
    attributionModel: AttributionModel,
  })
  .openapi('BrowserClick', { description: 'Whether a click from a page counted, and how long to keep its id' });

export const BrowserReferralBody = z
  .object({
    clickId: z.number().int().nonnegative().optional().openapi({ description: 'The click id the page kept (or visitorId)' }),
    visitorId: VisitorId.optional().openapi({
      description: "The visitor's id (or clickId): the program's attributionModel picks among its clicks",
    }),
    email: Email.openapi({ description: "The customer's email" }),
    name: ShortText.optional().openapi({ description: "The customer's name" }),
    externalId: ShortText.optional().openapi({ description: "The customer's id in your system (the referral's referredUserExternalId)" }),
  })
  .strict()
  .refine((body) => body.clickId !== undefined || body.visitorId !== undefined, {
    path: ['clickId'],
    message: 'clickId or visitorId is required',
  })
  .openapi('BrowserReferralBody');

/** A referral made from a browser answers only this: nothing about affiliates or other customers. */
export const BrowserReferral = z
  .object({
    ok: z.literal(true).openapi({ description: 'Always true' }),
    referralId: z.string().openapi({ description: "The new referral's id" }),
  })
  .openapi('BrowserReferral', { description: 'The referral is made; nothing about affiliates or other customers is told' });

export type BrowserClickBody = z.infer<typeof BrowserClickBody>;
export type BrowserReferralBody = z.infer<typeof BrowserReferralBody>;
export type BrowserClick = z.infer<typeof BrowserClick>;
