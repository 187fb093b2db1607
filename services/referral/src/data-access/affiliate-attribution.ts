import { ExplainedAttribution } from '@affiliate/contracts';
import { AppError, badRequest, type ServiceClient } from '@affiliate/platform';

export type AttributionSource = { clickId?: number; visitorId?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

/**
 * Who a referral belongs to, asked of the affiliate service (the owner of clicks, links and
 * affiliates) at the moment of the request, so an affiliate or click created a moment ago is found.
 * The most specific identifier wins: a click, then a visitor's clicks, then a slug, then the
 * affiliate itself. A refusal (no such click, a click past the attribution window) names the field.
 */
export async function resolveAttribution(client: ServiceClient, programId: string, source: AttributionSource): Promise<ExplainedAttribution> {
  const [field, value] = mostSpecific(source);
  const response = await client.request({ method: 'GET', path: '/internal/attribution', programId, query: { [field]: String(value) } });
  if (response.status === 404 || response.status === 400) {
    throw badRequest(`${field}: ${upstreamMessage(response.body) ?? `${String(value)} does not resolve to an affiliate in this program`}`);
  }
  const parsed = ExplainedAttribution.safeParse(response.body);
  if (response.status !== 200 || !parsed.success) {
    throw new AppError(502, `The affiliate service gave an unexpected answer (${response.status})`);
  }
  return parsed.data;
}

function mostSpecific(source: AttributionSource): [keyof AttributionSource, string | number] {
  if (source.clickId !== undefined) return ['clickId', source.clickId];
  if (source.visitorId !== undefined) return ['visitorId', source.visitorId];
  if (source.link !== undefined) return ['link', source.link];
  if (source.affiliateId !== undefined) return ['affiliateId', source.affiliateId];
  if (source.affiliateEmail !== undefined) return ['affiliateEmail', source.affiliateEmail];
  throw badRequest('one of clickId, link, affiliateId or affiliateEmail is required');
}

function upstreamMessage(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : undefined;
}
