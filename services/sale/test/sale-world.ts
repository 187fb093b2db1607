import type { Affiliate, Coupon, EventEnvelope, PromotionalCode, Referral } from '@affiliate/contracts';
import { bootService, type RunningService, type ServiceSettings } from '@affiliate/platform';
import { eventually, recordEvents, serviceApi, testServiceSettings, uniqueName, type ServiceApi } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildAffiliateService } from '../../affiliate/src/service';
import { buildCouponService } from '../../coupon/src/service';
import { buildReferralService } from '../../referral/src/service';
import { buildSaleService, type SaleServiceDeps } from '../src/service';

/**
 * The sale service with the REAL affiliate, coupon and referral services beside it on one exchange,
 * against the real database and broker, and a listener that records every sale.* event.
 */
export type SaleWorld = {
  affiliate: RunningService;
  coupon: RunningService;
  referral: RunningService;
  sale: RunningService;
  saleEvents: EventEnvelope[];
  api: (service: RunningService, programId: string) => Api;
  /** Another sale service on the same database, wired to other upstream addresses. */
  bootSaleVariant: (deps: Partial<SaleServiceDeps>) => Promise<RunningService>;
  stop: () => Promise<void>;
};

export type Api = ServiceApi;

const apiOf = (service: RunningService, programId: string): Api => serviceApi(service.url, programId);

export async function startSaleWorld(): Promise<SaleWorld> {
  const exchange = uniqueName('test_events');
  const affiliate = await bootService(testServiceSettings('affiliate', { exchange }), (context) => buildAffiliateService(context));
  const coupon = await bootService(testServiceSettings('coupon', { exchange }), (context) =>
    buildCouponService(context, { affiliateUrl: affiliate.url }),
  );
  const referral = await bootService(testServiceSettings('referral', { exchange }), (context) =>
    buildReferralService(context, { affiliateUrl: affiliate.url }),
  );
  // Generous: the test machine is shared, and a slow answer under load is not what these tests are about.
  const upstreams: SaleServiceDeps = {
    couponUrl: coupon.url,
    affiliateUrl: affiliate.url,
    referralUrl: referral.url,
    upstreamTimeoutMs: 15_000,
  };
  const saleSettings = testServiceSettings('sale', { exchange });
  const sale = await bootService(saleSettings, (context) => buildSaleService(context, upstreams));

  const listener = await recordEvents({
    amqpUrl: saleSettings.amqpUrl,
    exchange,
    eventTypes: ['sale.*'],
    connection: sale.context.connection,
  });
  const saleEvents = listener.events;

  const variants: RunningService[] = [];
  const bootSaleVariant = async (deps: Partial<SaleServiceDeps>) => {
    const settings: ServiceSettings = { ...saleSettings, name: 'sale-variant' };
    const variant = await bootService(settings, (context) => buildSaleService(context, { ...upstreams, ...deps }));
    variants.push(variant);
    return variant;
  };

  return {
    affiliate,
    coupon,
    referral,
    sale,
    saleEvents,
    api: apiOf,
    bootSaleVariant,
    stop: async () => {
      await listener.close();
      for (const service of [...variants, sale, referral, coupon, affiliate]) await service.stop();
    },
  };
}

async function ok<T>(pending: request.Test, what: string): Promise<T> {
  const response = await pending;
  if (response.status !== 200) throw new Error(`${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as T;
}

export async function createAffiliate(world: SaleWorld, programId: string, fields: { commissionRate?: number } = {}): Promise<Affiliate> {
  const body = { firstName: 'Ada', lastName: 'Lovelace', email: `${uniqueName('aff').toLowerCase()}@example.com`, ...fields };
  return ok<Affiliate>(world.api(world.affiliate, programId).post('/affiliates', body), 'creating an affiliate');
}

export async function setAffiliateStatus(world: SaleWorld, programId: string, affiliateId: string, status: string): Promise<void> {
  await ok(world.api(world.affiliate, programId).put('/affiliates', { affiliateId, status }), 'changing an affiliate status');
}

export async function createCoupon(world: SaleWorld, programId: string, fields: Record<string, unknown> = {}): Promise<Coupon> {
  return ok<Coupon>(
    world.api(world.coupon, programId).post('/coupons', { name: uniqueName('coupon'), percentOff: 10, ...fields }),
    'creating a coupon',
  );
}

export async function createCode(world: SaleWorld, programId: string, fields: Record<string, unknown>): Promise<PromotionalCode> {
  const body = {
    code: uniqueName('CODE')
      .toUpperCase()
      .replace(/[^A-Z0-9_-]/g, ''),
    ...fields,
  };
  return ok<PromotionalCode>(world.api(world.coupon, programId).post('/promotional-codes', body), 'creating a promotional code');
}

/** An affiliate with a code of a fresh coupon: the usual starting point of a promo-code sale. */
export async function affiliateWithCode(
  world: SaleWorld,
  programId: string,
  options: { commissionRate?: number; coupon?: Record<string, unknown>; code?: Record<string, unknown> } = {},
): Promise<{ affiliate: Affiliate; coupon: Coupon; code: PromotionalCode }> {
  const affiliate = await createAffiliate(
    world,
    programId,
    options.commissionRate === undefined ? {} : { commissionRate: options.commissionRate },
  );
  const coupon = await createCoupon(world, programId, options.coupon);
  const code = await createCode(world, programId, { couponId: coupon.id, affiliateId: affiliate.id, ...options.code });
  return { affiliate, coupon, code };
}

export async function createReferral(world: SaleWorld, programId: string, fields: Record<string, unknown>): Promise<Referral> {
  const body = { email: `${uniqueName('customer').toLowerCase()}@example.com`, ...fields };
  return ok<Referral>(world.api(world.referral, programId).post('/referrals', body), 'creating a referral');
}

export async function timesRedeemed(world: SaleWorld, programId: string, code: PromotionalCode): Promise<{ code: number; coupon: number }> {
  const current = await ok<PromotionalCode>(
    world.api(world.coupon, programId).get('/promotional-codes', { id: code.id }),
    'reading a code',
  );
  return { code: current.timesRedeemed, coupon: current.coupon.timesRedeemed };
}

export async function saleEvent(world: SaleWorld, type: string, saleId: string): Promise<EventEnvelope> {
  return eventually(() => {
    const found = world.saleEvents.find((event) => event.type === type && event.data.id === saleId);
    if (!found) throw new Error(`${type} for ${saleId} not received yet`);
    return found;
  });
}

/** Boots one sale world for the test file (stopped after it) and gives access to it. */
export function saleWorldOfThisFile(): () => SaleWorld {
  let world: SaleWorld | undefined;
  beforeAll(async () => {
    world = await startSaleWorld();
  });
  afterAll(() => world?.stop());
  return () => {
    if (!world) throw new Error('the sale world is not started yet');
    return world;
  };
}
