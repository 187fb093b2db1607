import { Affiliate, type EventEnvelope, type EventType, type Program } from '@affiliate/contracts';
import { bootService, EventBus, type RunningService } from '@affiliate/platform';
import {
  eventually,
  newProgramId,
  programUpdatedEvent,
  recordEvents,
  serviceApi,
  testServiceSettings,
  type ServiceApi,
} from '@affiliate/platform/testing';
import { buildAffiliateService } from '../src/service';

/** The affiliate service on port 0 against the real database and broker, plus a second bus to talk to it. */
export type Harness = {
  service: RunningService;
  bus: EventBus;
  api: (programId: string) => Api;
  /** Publishes an event onto the service's exchange, as another component would. */
  publish: (event: EventEnvelope) => Promise<void>;
  /** Events the service published, in arrival order. */
  published: EventEnvelope[];
  setProgram: (programId: string, settings: Partial<Program>) => Promise<void>;
  stop: () => Promise<void>;
};

export type Api = ServiceApi;

export async function startAffiliateService(options: Parameters<typeof buildAffiliateService>[1] = {}): Promise<Harness> {
  const service = await bootService(testServiceSettings('affiliate'), (context) => buildAffiliateService(context, options));
  const recorder = await recordEvents({ ...service.context.settings, eventTypes: ['affiliate.*'], connection: service.context.connection });
  const { bus, events: published } = recorder;
  const api = (programId: string): Api => serviceApi(service.url, programId);
  const publish = (event: EventEnvelope) => bus.publish(event);
  const setProgram = async (programId: string, settings: Partial<Program>) => {
    await publish(programUpdatedEvent(programId, settings));
  };
  const stop = async () => {
    await bus.close();
    await service.stop();
  };
  return { service, bus, api, publish, published, setProgram, stop };
}

export const eventsOf = (harness: Harness, type: EventType, id: string) =>
  harness.published.filter((event) => event.type === type && event.data.id === id);

export { newProgramId };

/** Creates an affiliate through the API and checks the answer against the contract. */
export async function createAffiliate(api: Api, email: string, affiliateLink?: string): Promise<Affiliate> {
  const response = await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email, affiliateLink });
  expect(response.status).toBe(200);
  return Affiliate.parse(response.body);
}

let settingsVersion = 0;

/**
 * Announces the program's settings and waits until the service has applied them: each call uses a
 * URL modifier of its own, which shows in the fullURLs of the program's link `slug` once applied.
 */
export async function applyProgramSettings(harness: Harness, programId: string, slug: string, settings: Partial<Program>): Promise<void> {
  settingsVersion += 1;
  const urlModifier = `settings${settingsVersion}`;
  await harness.setProgram(programId, { urlModifier, destinationUrls: [{ url: 'https://shop.example.com/', params: {} }], ...settings });
  await eventually(async () =>
    expect((await harness.api(programId).get('/links', { link: slug })).body[0].fullURLs[0].fullUrl).toContain(`${urlModifier}=`),
  );
}
