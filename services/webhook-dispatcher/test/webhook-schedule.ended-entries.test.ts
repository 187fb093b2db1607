import { randomUUID } from 'node:crypto';
import { newProgramId, testInfra, uniqueName } from '@affiliate/platform/testing';
import mongoose, { type Connection } from 'mongoose';
import { ScheduleRepository } from '../src/data-access/webhook-schedule';

let connection: Connection;
let schedule: ScheduleRepository;

beforeAll(async () => {
  connection = await mongoose.createConnection(testInfra().mongoUrl, { dbName: uniqueName('test_webhook_schedule') }).asPromise();
  schedule = new ScheduleRepository({ connection });
});
afterAll(async () => {
  await connection.dropDatabase();
  await connection.close();
});

const entryOf = (id: string) => connection.collection('webhook_schedule').findOne({ _id: id as never });

test('a delivery recovered while its sender records its end keeps the entry the recover wrote, so it is sent again', async () => {
  const programId = newProgramId();
  const delivery = { _id: randomUUID(), programId, endpointId: randomUUID() };
  // Far ahead, so that nothing else would ever take it.
  const leaseEnd = new Date(Date.now() + 3_600_000);
  await schedule.schedule(delivery, leaseEnd);
  // The attempt fails for good; before its sender removes the entry, a recover puts the delivery back on the schedule.
  const recoveredDueAt = new Date(leaseEnd.getTime() + 1);
  await schedule.schedule(delivery, recoveredDueAt);
  await schedule.unschedule(programId, delivery._id, [leaseEnd]);
  expect((await entryOf(delivery._id))?.dueAt).toEqual(recoveredDueAt);

  // An entry still as its sender saw it goes when the delivery ends, batched with others.
  const other = { _id: randomUUID(), programId, endpointId: delivery.endpointId };
  await schedule.schedule(other, leaseEnd);
  await Promise.all([
    schedule.unschedule(programId, delivery._id, [recoveredDueAt]),
    schedule.unschedule(programId, other._id, [new Date(0), leaseEnd]),
  ]);
  expect(await entryOf(delivery._id)).toBeNull();
  expect(await entryOf(other._id)).toBeNull();
});
