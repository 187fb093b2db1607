/**
 * A service whose database has gone away answers 503 with Retry-After, whatever kind of write met
 * the outage: a client retries a 503 later, where a 500 tells it the request itself is at fault.
 */
import { bootService, createRouter, isDatabaseUnavailable, programIdOf, type RunningService } from '@affiliate/platform';
import {
  internalHeaders,
  newProgramId,
  startDisposableMongo,
  testServiceSettings,
  type DisposableMongo,
} from '@affiliate/platform/testing';
import request from 'supertest';

let mongo: DisposableMongo;
let service: RunningService;

beforeAll(async () => {
  mongo = await startDisposableMongo();
  service = await bootService(testServiceSettings('platform-database-away', { mongoUrl: mongo.url }), ({ connection }) => {
    const things = connection.collection('things');
    const routes = createRouter();
    routes.post('/one', async (_req, res) => {
      await things.insertOne({ programId: programIdOf(res) });
      res.json({ stored: 1 });
    });
    // insertMany and bulkWrite go through the driver's bulk operation, which wraps whatever stopped
    // it, the database's absence included, in a MongoBulkWriteError.
    routes.post('/many', async (_req, res) => {
      const result = await things.insertMany([{ programId: programIdOf(res) }, { programId: programIdOf(res) }]);
      res.json({ stored: result.insertedCount });
    });
    routes.post('/bulk', async (_req, res) => {
      const result = await things.bulkWrite([{ insertOne: { document: { programId: programIdOf(res) } } }], { ordered: false });
      res.json({ stored: result.insertedCount });
    });
    return { routes };
  });
}, 90_000);
afterAll(async () => {
  await service?.stop();
  await mongo?.destroy();
});

test('a bulk write the database refuses (a duplicate key) is not taken for the database being away', async () => {
  const things = service.context.connection.collection('things');
  const refused = await things.insertMany([{ _id: 'twice' as never }, { _id: 'twice' as never }]).then(
    () => new Error('stored twice'),
    (error: Error) => error,
  );
  expect({ name: refused.name, unavailable: isDatabaseUnavailable(refused) }).toEqual({ name: 'MongoBulkWriteError', unavailable: false });
});

test('a single, a many and a bulk write that meet the database away are each answered 503 with Retry-After, not 500', async () => {
  const programId = newProgramId();
  // Connected and writing first: the outage comes to a service that had its database.
  for (const path of ['/one', '/many', '/bulk'])
    await request(service.server).post(path).set(internalHeaders(programId)).send({}).expect(200);

  await mongo.stop();
  for (const path of ['/one', '/many', '/bulk']) {
    const response = await request(service.server).post(path).set(internalHeaders(programId)).send({});
    expect({ path, status: response.status, retryAfter: response.headers['retry-after'], error: response.body.error }).toEqual({
      path,
      status: 503,
      retryAfter: '5',
      error: 'The database is unavailable; retry later',
    });
  }
}, 60_000);
