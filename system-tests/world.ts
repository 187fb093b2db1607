import { Subscriber, System } from './harness';

/** A whole system and one webhook subscriber for a test file: started before its tests, stopped after them. */
export function systemWithSubscriber(): { system: System; subscriber: Subscriber; hooks: string } {
  const world = { system: undefined as unknown as System, subscriber: new Subscriber(), hooks: '' };
  beforeAll(async () => {
    world.system = await System.start();
    world.hooks = await world.subscriber.start();
  }, 180_000);
  afterAll(async () => {
    await world.subscriber.stop();
    await world.system?.stop();
  });
  return world;
}
