import { randomUUID } from 'node:crypto';
import { INTERNAL_TOKEN_HEADER, PROGRAM_ID_HEADER } from '../http/internal-auth';
import type { ServiceSettings } from '../service';

export const TEST_INTERNAL_TOKEN = 'test-internal-token-0123456789';

export function testInfra() {
  const mongoUrl = process.env.MONGO_URL;
  const amqpUrl = process.env.AMQP_URL;
  if (!mongoUrl || !amqpUrl) throw new Error('MONGO_URL and AMQP_URL are not set: run the tests with `npm test`');
  return { mongoUrl, amqpUrl, redisUrl: process.env.REDIS_URL };
}

/** A fresh name per test file (and per call), so test files never see each other's data or events. */
export function uniqueName(prefix: string): string {
  return `${prefix.replace(/[^a-z0-9]/gi, '_').slice(0, 30)}_${randomUUID().slice(0, 8)}`;
}

/** Settings for bootService against the test infrastructure: port 0, own database, own exchange. */
export function testServiceSettings(name: string, overrides: Partial<ServiceSettings> = {}): ServiceSettings {
  const { mongoUrl, amqpUrl } = testInfra();
  return {
    name,
    port: 0,
    mongoUrl,
    dbName: uniqueName(`test_${name}`),
    amqpUrl,
    exchange: uniqueName('test_events'),
    internalToken: TEST_INTERNAL_TOKEN,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    outboxSweepIntervalMs: 200,
    ...overrides,
  };
}

/** Headers the gateway would add: tests of a service call it the way the gateway does. */
export function internalHeaders(programId: string): Record<string, string> {
  return { [INTERNAL_TOKEN_HEADER]: TEST_INTERNAL_TOKEN, [PROGRAM_ID_HEADER]: programId };
}

export const newProgramId = (): string => randomUUID();

/** Polls until the check passes; for effects that arrive through the broker. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export * from './rabbit-node';
export * from './rabbit-cluster';
export * from './mongo-node';
export * from './service-api';
export * from './program-event';
