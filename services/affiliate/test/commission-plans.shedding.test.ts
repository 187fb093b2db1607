import { BacklogNewsPublisher, bootService, createLogger, EventBus, type RunningService } from '@affiliate/platform';
import { eventually, newProgramId, serviceApi, testInfra, testServiceSettings } from '@affiliate/platform/testing';
import { buildAffiliateService } from '../src/service';

/**
 * Shedding at the door refuses only the writes that would add events (issue 29): a commission plan
 * is terms no event announces, so a program whose webhooks are behind still manages its plans and
 * counts its clicks, while its affiliates (which are announced) wait. The dispatcher is played by a
 * BacklogNewsPublisher on a bus of its own, telling that the program is past its bound.
 */
const logger = createLogger('affiliate-shedding-test', 'silent');
let service: RunningService;
let dispatcherBus: EventBus;
let news: BacklogNewsPublisher | undefined;

beforeAll(async () => {
  const settings = testServiceSettings('affiliate', {
    shedding: { webhookBacklog: 1000, webhookBacklogPerProgram: 3, outboxAgeMs: 60_000 },
  });
  service = await bootService(settings, (context) => buildAffiliateService(context));
  dispatcherBus = new EventBus({ url: testInfra().amqpUrl, exchange: settings.exchange, logger });
});

afterAll(async () => {
  await news?.stop();
  await dispatcherBus.close();
  await service.stop();
});

test('a program whose webhooks are behind is refused new affiliates but creates, changes and deletes its commission plans (they create no events)', async () => {
  const behind = newProgramId();
  const api = serviceApi(service.url, behind);
  news = new BacklogNewsPublisher(dispatcherBus, service.context.settings.exchange, () => ({ [behind]: 10 }), logger);
  news.start();
  const refused = await eventually(async () => {
    const answer = await api.post('/affiliates', { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com' });
    expect(answer.status).toBe(503);
    return answer;
  });
  expect(refused.body.code).toBe('service_busy');
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

  const created = await api.post('/commission-plans', { name: 'Flat', commissionType: 'PERCENTAGE', rate: 10, recurring: 'FOREVER' });
  expect(created.status).toBe(200);
  const changed = await api.put('/commission-plans', { commissionPlanId: created.body.id, rate: 12, isDefault: true });
  expect(changed.status).toBe(200);
  expect(changed.body).toMatchObject({ rate: 12, isDefault: true });
  expect((await api.put('/commission-plans', { commissionPlanId: created.body.id, isDefault: false })).status).toBe(200);
  const deleted = await api.delete('/commission-plans', { commissionPlanId: created.body.id });
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({ id: created.body.id, deleted: true });
  expect((await api.get('/commission-plans', { id: created.body.id })).status).toBe(404);
  // A refused write changes nothing (those sent before the news came were accepted).
  const affiliates = (await api.get('/affiliates')).body.length;
  expect((await api.post('/affiliates', { firstName: 'Bo', lastName: 'Ng', email: 'bo@example.com' })).status).toBe(503);
  expect((await api.get('/affiliates')).body).toHaveLength(affiliates);
});
