import type { RunningService } from '@affiliate/platform';
import { internalHeaders, newProgramId } from '@affiliate/platform/testing';
import request from 'supertest';
import { bootDispatcher, createEndpoint, deliveryReaching, eventPublisher, testDispatcherSettings } from './support/dispatcher';
import { startSubscriber, type Subscriber } from './support/subscriber';

// Private URLs allowed (as `npm start` does), answers of private addresses not shown (the default).
let service: RunningService;
let publisher: ReturnType<typeof eventPublisher>;
let subscriber: Subscriber;
const programId = newProgramId();
const SECRET_PAGE = 'internal admin page: db password hunter2';

beforeAll(async () => {
  service = await bootDispatcher(testDispatcherSettings({ showPrivateResponses: false }));
  publisher = eventPublisher(service);
  subscriber = await startSubscriber(() => ({ status: 200, body: SECRET_PAGE }));
});
afterAll(async () => {
  await publisher.close();
  await service.stop();
  await subscriber.close();
});

test("a test send to a private address reports the status and size, never the target's answer", async () => {
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['*'] });
  const response = await request(service.server)
    .post('/webhook-endpoints/test')
    .set(internalHeaders(programId))
    .send({ webhookEndpointId: endpoint.id })
    .expect(200);
  expect(response.body).toMatchObject({
    succeeded: true,
    statusCode: 200,
    responseExcerpt: null,
    responseBytes: Buffer.byteLength(SECRET_PAGE),
  });
  expect(JSON.stringify(response.body)).not.toContain('hunter2');
});

test("the delivery log of a private address keeps the status and size, never the target's answer", async () => {
  const endpoint = await createEndpoint(service, programId, { url: subscriber.url, eventTypes: ['sale.created'] });
  const event = await publisher.publish('sale.created', programId);
  const delivery = await deliveryReaching(service, programId, { eventId: event.id, endpointId: endpoint.id }, 'succeeded');
  expect(delivery.attempts[0]).toMatchObject({ statusCode: 200, responseExcerpt: null, responseBytes: Buffer.byteLength(SECRET_PAGE) });
  expect(JSON.stringify(delivery)).not.toContain('hunter2');
});
