import type { Affiliate, EventEnvelope, EventType } from '@affiliate/contracts';
import { bootService, type RunningService } from '@affiliate/platform';
import { newProgramId, recordEvents, serviceApi, testServiceSettings, uniqueName, type ServiceApi } from '@affiliate/platform/testing';
import { buildAffiliateService } from '../../affiliate/src/service';
import { buildCouponService } from '../src/service';

/**
 * The coupon service on port 0 with the REAL affiliate service beside it (same exchange), against
 * the real database and broker, plus an observer bus that records what the coupon service publishes.
 */
export type Harness = {
  coupon: RunningService;
  affiliate: RunningService;
  api: (programId: string) => Api;
  affiliateApi: (programId: string) => Api;
  /** coupon.* and promocode.* events, in arrival order. */
  published: EventEnvelope[];
  createAffiliate: (programId: string, fields?: Partial<{ firstName: string; lastName: string; email: string }>) => Promise<Affiliate>;
  stop: () => Promise<void>;
};

export type Api = ServiceApi;

const apiOf = (service: RunningService, programId: string): Api => serviceApi(service.url, programId);

export async function startCouponService(): Promise<Harness> {
  const exchange = uniqueName('test_events');
  const affiliate = await bootService(testServiceSettings('affiliate', { exchange }), (context) => buildAffiliateService(context));
  const coupon = await bootService(testServiceSettings('coupon', { exchange }), (context) =>
    buildCouponService(context, { affiliateUrl: affiliate.url }),
  );
  const recorder = await recordEvents({
    amqpUrl: coupon.context.settings.amqpUrl,
    exchange,
    eventTypes: ['coupon.*', 'promocode.*'],
    connection: coupon.context.connection,
  });
  const published = recorder.events;
  let counter = 0;
  const createAffiliate: Harness['createAffiliate'] = async (programId, fields = {}) => {
    counter += 1;
    const body = { firstName: 'Jane', lastName: 'Doe', email: `jane${counter}.${uniqueName('x')}@example.com`, ...fields };
    const response = await apiOf(affiliate, programId).post('/affiliates', body);
    if (response.status !== 200) throw new Error(`creating an affiliate failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as Affiliate;
  };
  const stop = async () => {
    await recorder.close();
    await coupon.stop();
    await affiliate.stop();
  };
  return {
    coupon,
    affiliate,
    api: (programId) => apiOf(coupon, programId),
    affiliateApi: (programId) => apiOf(affiliate, programId),
    published,
    createAffiliate,
    stop,
  };
}

export const eventsOf = (harness: Harness, type: EventType, id: string) =>
  harness.published.filter((event) => event.type === type && event.data.id === id);

export const percentCoupon = { name: 'Summer', percentOff: 20 };

/** A coupon and a code assigned to a fresh affiliate, ready to redeem. */
export async function redeemableCode(
  harness: Harness,
  programId: string,
  coupon: Record<string, unknown> = {},
  code: Record<string, unknown> = {},
): Promise<{ couponId: string; promotionalCodeId: string; code: string; affiliateId: string }> {
  const api = harness.api(programId);
  const affiliate = await harness.createAffiliate(programId);
  const createdCoupon = await api.post('/coupons', { ...percentCoupon, ...coupon }).expect(200);
  const codeString = uniqueName('CODE').toUpperCase();
  const createdCode = await api
    .post('/promotional-codes', { couponId: createdCoupon.body.id, code: codeString, affiliateId: affiliate.id, ...code })
    .expect(200);
  return {
    couponId: createdCoupon.body.id,
    promotionalCodeId: createdCode.body.id,
    code: createdCode.body.code,
    affiliateId: affiliate.id,
  };
}

export { newProgramId };
