import type { ConfigureStripeBody, StripeIntegration } from '@affiliate/contracts';
import type { SaleRepositories } from '../data-access/repositories';

/** What a program sees of its Stripe connection: never the secret, only its last 4 characters. */
function integrationView(programId: string, webhookSecret: string | null): StripeIntegration {
  return {
    configured: webhookSecret !== null,
    webhookSecretLast4: webhookSecret === null ? null : webhookSecret.slice(-4),
    webhookUrl: `/integrations/stripe/${programId}/webhooks`,
  };
}

export async function stripeIntegrationOf(repositories: SaleRepositories, programId: string): Promise<StripeIntegration> {
  return integrationView(programId, await repositories.stripeSettings.webhookSecretOf(programId));
}

/** PUT /integrations/stripe: the signing secret of the program's Stripe endpoint; a new one replaces the old at once. */
export async function configureStripe(
  repositories: SaleRepositories,
  programId: string,
  body: ConfigureStripeBody,
): Promise<StripeIntegration> {
  await repositories.stripeSettings.saveWebhookSecret(programId, body.webhookSecret);
  return integrationView(programId, body.webhookSecret);
}
