import type { Affiliate, EventEnvelope } from '@affiliate/contracts';
import { EventBus, bootService, createLogger, processedEvents, type RunningService } from '@affiliate/platform';
import { internalHeaders, testServiceSettings, uniqueName } from '@affiliate/platform/testing';
import request from 'supertest';
import { buildAffiliateService } from '../../affiliate/src/service';
import { buildReferralService } from '../src/service';

/** The real affiliate and referral services on one exchange, plus a listener that records every event. */
export type ReferralWorld = {
  affiliate: RunningService;
  referral: RunningService;
  events: EventEnvelope[];
  stop: () => Promise<void>;
};

export async function startReferralWorld(): Promise<ReferralWorld> {
  const exchange = uniqueName('test_events');
  const affiliate = await bootService(testServiceSettings('affiliate', { exchange }), (context) => buildAffiliateService(context));
  const referral = await bootService(testServiceSettings('referral', { exchange }), (context) =>
    buildReferralService(context, { affiliateUrl: affiliate.url }),
  );
  const events: EventEnvelope[] = [];
  const listener = new EventBus({ url: referral.context.settings.amqpUrl, exchange, logger: createLogger('listener', 'silent') });
  await listener.subscribe({
    queue: 'referral-test-listener',
    eventTypes: ['referral.*'],
    processedEvents: processedEvents(referral.context.connection, uniqueName('listener')),
    handler: async (event) => void events.push(event),
  });
  return {
    affiliate,
    referral,
    events,
    stop: async () => {
      await listener.close();
      await referral.stop();
      await affiliate.stop();
    },
  };
}

export async function createAffiliate(
  world: ReferralWorld,
  programId: string,
  email = `${uniqueName('aff')}@example.com`,
): Promise<Affiliate> {
  const response = await request(world.affiliate.server)
    .post('/affiliates')
    .set(internalHeaders(programId))
    .send({ firstName: 'Ada', lastName: 'Lovelace', email });
  if (response.status !== 200) throw new Error(`creating an affiliate failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as Affiliate;
}

export const referralEmail = (): string => `${uniqueName('customer').toLowerCase()}@example.com`;
