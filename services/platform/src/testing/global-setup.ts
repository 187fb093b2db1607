import { execFileSync } from 'node:child_process';

type StartedContainer = { stop: () => Promise<unknown> };
const started: StartedContainer[] = [];

function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Tests run against real servers. MONGO_URL and AMQP_URL win when set (CI and `npm test` set them
 * from scripts/local-infra.sh); otherwise testcontainers starts MongoDB and RabbitMQ where Docker
 * runs; otherwise we stop with instructions instead of failing test by test.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.MONGO_URL && process.env.AMQP_URL) return;
  if (!dockerAvailable()) {
    throw new Error(
      'Tests need a MongoDB-compatible server and RabbitMQ. Either set MONGO_URL and AMQP_URL, run ' +
        '`npm test` (which starts scripts/local-infra.sh when Docker is absent), or start a Docker engine.',
    );
  }
  const { GenericContainer, Wait } = await import('testcontainers');
  const mongo = await new GenericContainer('mongo:7').withExposedPorts(27017).start();
  const rabbit = await new GenericContainer('rabbitmq:3.13-alpine')
    .withExposedPorts(5672)
    .withWaitStrategy(Wait.forLogMessage('Server startup complete'))
    .start();
  started.push(mongo, rabbit);
  process.env.MONGO_URL = `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}`;
  process.env.AMQP_URL = `amqp://guest:guest@${rabbit.getHost()}:${rabbit.getMappedPort(5672)}`;
  (globalThis as { __TEST_CONTAINERS__?: StartedContainer[] }).__TEST_CONTAINERS__ = started;
}
