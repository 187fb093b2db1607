import { z } from './zod';

/**
 * Stripe, the payment processor of `integrationType`: its webhooks turn payments into sales and
 * refunds and disputes into reversals. The signing secret is written once and never shown again.
 */
export const ConfigureStripeBody = z
  .object({
    webhookSecret: z
      .string()
      .trim()
      .max(255)
      .regex(
        /^whsec_[A-Za-z0-9+/=_-]{8,}$/,
        'must be the signing secret of a Stripe webhook endpoint (whsec_…), as the Stripe dashboard shows it',
      )
      .openapi({ description: 'The signing secret of the Stripe webhook endpoint (whsec_…): stored, never returned' }),
  })
  .strict()
  .openapi('ConfigureStripeBody');

export const StripeIntegration = z
  .object({
    configured: z.boolean().openapi({ description: 'True once a webhook signing secret is stored' }),
    webhookSecretLast4: z
      .string()
      .nullable()
      .openapi({ description: 'The last 4 characters of the stored secret, to tell which one it is' }),
    webhookUrl: z.string().openapi({ description: 'The path on the gateway to give Stripe as the endpoint URL (after your gateway host)' }),
  })
  .openapi('StripeIntegration');

/** The answer Stripe gets from the webhook route: what became of the event (Stripe only reads the status). */
export const StripeWebhookReceipt = z
  .object({
    received: z.literal(true).openapi({ description: 'Always true' }),
    outcome: z.enum(['processed', 'ignored', 'replayed']).openapi({
      description:
        'processed: a sale recorded or reversed; ignored: an event type or object not acted on; replayed: this event was processed before',
    }),
    detail: z.string().optional().openapi({ description: 'What was done or why not, for people' }),
  })
  .openapi('StripeWebhookReceipt', { description: 'What became of a Stripe event' });

export type ConfigureStripeBody = z.infer<typeof ConfigureStripeBody>;
export type StripeIntegration = z.infer<typeof StripeIntegration>;
export type StripeWebhookReceipt = z.infer<typeof StripeWebhookReceipt>;
