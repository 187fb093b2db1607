import { PORTAL_AFFILIATE_STATUSES, type CreatePortalSessionBody, type InternalAffiliate, type PortalSession } from '@affiliate/contracts';
import { AppError, badRequest, notFound, upstreamCodeOf } from '@affiliate/platform';
import type { PortalSessionCreator, PortalSessions } from './portal-sessions';
import type { ServiceCalls } from './service-calls';

/** Where the portal is served; a link is `<gateway origin>/portal/open/<token>`. */
export const PORTAL_PATH = '/portal';
export const PORTAL_OPEN_PATH = `${PORTAL_PATH}/open`;

export type PortalDeps = { sessions: PortalSessions; services: Pick<ServiceCalls, 'affiliate'> };

/**
 * The affiliate of the program, as the affiliate service has it now; 404 when the program has none
 * (deleted ones included). The one read every portal decision about an affiliate starts from.
 */
export async function affiliateOf(deps: PortalDeps, programId: string, affiliateId: string): Promise<InternalAffiliate> {
  const answer = await deps.services.affiliate.request<InternalAffiliate | { error: string }>({
    method: 'GET',
    path: '/internal/affiliates',
    programId,
    query: { id: affiliateId },
  });
  if (answer.status === 404) throw notFound(`No affiliate with id ${affiliateId} in this program`);
  if (answer.status !== 200)
    throw new AppError(answer.status, (answer.body as { error: string }).error, { code: upstreamCodeOf(answer.body) });
  return answer.body as InternalAffiliate;
}

/** Why an affiliate may not have a portal, or null when it may: only an ACTIVE one (never a pending, rejected or disabled one). */
export function portalRefusalOf(affiliate: Pick<InternalAffiliate, 'id' | 'status'>): string | null {
  return (PORTAL_AFFILIATE_STATUSES as readonly string[]).includes(affiliate.status)
    ? null
    : `Affiliate ${affiliate.id} is ${affiliate.status}: only an ACTIVE affiliate can open the affiliate portal`;
}

/** POST /api/v1/affiliate-portal-sessions: a single-use link for an ACTIVE affiliate of the key's program. */
export async function createPortalSession(
  deps: PortalDeps,
  programId: string,
  body: CreatePortalSessionBody,
  gatewayOrigin: string,
  createdBy: PortalSessionCreator,
): Promise<PortalSession> {
  const affiliate = await affiliateOf(deps, programId, body.affiliateId);
  const refusal = portalRefusalOf(affiliate);
  if (refusal) throw badRequest(refusal, 'affiliate_not_active', 'affiliateId');
  const { session, linkToken } = await deps.sessions.create(programId, affiliate.id, body.returnUrl ?? null, createdBy);
  return {
    id: session._id,
    affiliateId: session.affiliateId,
    url: `${gatewayOrigin}${PORTAL_OPEN_PATH}/${linkToken}`,
    expiresAt: session.linkExpiresAt.toISOString(),
    returnUrl: session.returnUrl,
  };
}

/**
 * Each coupon offered to affiliates must be one of the program's: a made-up id is refused before it
 * is stored, by the program's own settings route and by the operators' admin routes alike.
 */
export async function checkAffiliateCoupons(
  services: Pick<ServiceCalls, 'coupon'>,
  programId: string | null,
  couponIds: string[] | undefined,
): Promise<void> {
  for (const couponId of couponIds ?? []) {
    // A program being created has no coupons yet.
    const answer =
      programId === null
        ? { status: 404 }
        : await services.coupon.request({ method: 'GET', path: '/coupons', programId, query: { id: couponId } });
    if (answer.status === 404)
      throw badRequest(`affiliateCouponIds: no coupon with id ${couponId} in this program`, 'resource_missing', 'affiliateCouponIds');
  }
}
