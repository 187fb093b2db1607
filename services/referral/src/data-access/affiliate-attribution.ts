import { ExplainedAttribution } from '@affiliate/contracts';
import { AppError, badRequest, type ServiceClient } from '@affiliate/platform';

export type AttributionSource = { clickId?: number; visitorId?: string; link?: string; affiliateId?: string; affiliateEmail?: string };

/**
 * Who a referral belongs to, asked of the affiliate service (the owner of clicks, links and
 * affiliates) at the moment of the request, so an affiliate or click created a moment ago is found.
 * The most specific identifier wins: a click, then a visitor's clicks, then a slug, then the
 * affiliate itself. Every identifier sent is resolved, and identifiers naming different affiliates
 * are a 400 naming both (as a sale's referralId and email are): the caller's data is contradictory,
 * and crediting one of them silently would pay the wrong affiliate. A refusal (no such click, a
 * click past the attribution window) names the field.
 */
export async function resolveAttribution(
  client: ServiceClient,
  programId: string,
  source: AttributionSource,
): Promise<ExplainedAttribution> {
  const given = identifiersOf(source);
  const [first, ...others] = await Promise.all(given.map(([field, value]) => resolveOne(client, programId, field, value)));
  if (!first) throw badRequest('one of clickId, link, affiliateId or affiliateEmail is required', 'parameter_missing');
  const [firstField, firstValue] = given[0]!;
  others.forEach((other, index) => {
    if (other.affiliateId === first.affiliateId) return;
    const [field, value] = given[index + 1]!;
    throw badRequest(
      `${field}: ${String(value)} names another affiliate than ${firstField} ${String(firstValue)}; send identifiers of one affiliate, or only one of them`,
      'parameters_inconsistent',
      field,
    );
  });
  return first;
}

async function resolveOne(
  client: ServiceClient,
  programId: string,
  field: keyof AttributionSource,
  value: string | number,
): Promise<ExplainedAttribution> {
  const response = await client.request({ method: 'GET', path: '/internal/attribution', programId, query: { [field]: String(value) } });
  if (response.status === 404 || response.status === 400) {
    throw badRequest(
      `${field}: ${upstreamMessage(response.body) ?? `${String(value)} does not resolve to an affiliate in this program`}`,
      'attribution_failed',
      field,
    );
  }
  const parsed = ExplainedAttribution.safeParse(response.body);
  if (response.status !== 200 || !parsed.success) {
    throw new AppError(502, `The affiliate service gave an unexpected answer (${response.status})`);
  }
  return parsed.data;
}

/** The identifiers sent, most specific first. */
function identifiersOf(source: AttributionSource): [keyof AttributionSource, string | number][] {
  const order: (keyof AttributionSource)[] = ['clickId', 'visitorId', 'link', 'affiliateId', 'affiliateEmail'];
  return order.flatMap((field): [keyof AttributionSource, string | number][] =>
    source[field] === undefined ? [] : [[field, source[field]]],
  );
}

function upstreamMessage(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : undefined;
}
