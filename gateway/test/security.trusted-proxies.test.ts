import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { gatewaySettingsFromEnv } from '../src/config';
import { adminAuth, bearer, startGateway } from './support';

// Generated here: a secret written in the repository would be refused in production (production-secrets.test.ts).
const PRODUCTION = {
  NODE_ENV: 'production',
  INTERNAL_TOKEN: randomBytes(32).toString('hex'),
  ADMIN_TOKEN: randomBytes(32).toString('hex'),
};

test('in production TRUST_PROXY must be the addresses or ranges of the proxies: true and hop counts are refused with a clear message', () => {
  for (const value of ['true', '1', '2']) {
    expect(() => gatewaySettingsFromEnv({ ...PRODUCTION, TRUST_PROXY: value })).toThrow(
      /TRUST_PROXY: must be the addresses or CIDR ranges of the proxies in front of the gateway/,
    );
  }
  for (const value of ['10.0.0.0/8', '10.0.0.0/8, fd00::/8', '192.168.1.20', 'loopback', 'false']) {
    expect(gatewaySettingsFromEnv({ ...PRODUCTION, TRUST_PROXY: value }).trustProxy).toBe(value === 'false' ? false : value);
  }
  // Outside production a hop count stays possible (local proxies, tests).
  expect(gatewaySettingsFromEnv({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
});

test('in production a catch-all TRUST_PROXY range (wider than /8, 0.0.0.0/0, ::/0, every IPv4-mapped address) is refused naming it, and the message suggests no range the pre-apply check refuses', () => {
  for (const value of ['0.0.0.0/0', '::/0', '10.244.0.0/16, 0.0.0.0/1', '::ffff:0:0/96', '::ffff:0.0.0.0/100', '::/4']) {
    const wide = value
      .split(',')
      .map((entry) => entry.trim())
      .find((entry) => !entry.startsWith('10.244.')) as string;
    expect(() => gatewaySettingsFromEnv({ ...PRODUCTION, TRUST_PROXY: value })).toThrow(`TRUST_PROXY: "${wide}" is wider than /8`);
  }
  for (const value of ['true', '0.0.0.0/0']) {
    let message = '';
    try {
      gatewaySettingsFromEnv({ ...PRODUCTION, TRUST_PROXY: value });
    } catch (error) {
      message = String(error);
    }
    const suggested = [...message.matchAll(/\d+\.\d+\.\d+\.\d+\/(\d+)/g)]
      .filter((match) => match[0] !== value)
      .map((match) => Number(match[1]));
    expect({ value, suggested: suggested.length > 0 && suggested.every((prefix) => prefix >= 16) }).toEqual({ value, suggested: true });
  }
  // Outside production a catch-all stays possible (a local proxy in front of tests).
  expect(gatewaySettingsFromEnv({ TRUST_PROXY: '0.0.0.0/0' }).trustProxy).toBe('0.0.0.0/0');
});

test('TRUST_PROXY entries that are neither addresses nor ranges are refused in every mode', () => {
  for (const value of ['10.0.0.0/33', 'ingress.example.com', '10.0.0.0/8,,', '*']) {
    expect(() => gatewaySettingsFromEnv({ TRUST_PROXY: value })).toThrow(
      /TRUST_PROXY: must be false, true, a hop count, or comma-separated addresses and CIDR ranges/,
    );
  }
});

test('behind a trusted proxy range each client has its own address: one client locked out of /admin/v1 does not lock out another', async () => {
  const gateway = await startGateway({
    trustProxy: '127.0.0.0/8',
    failedAuthLimits: { api: { points: 60, duration: 60 }, admin: { points: 2, duration: 900 } },
  });
  try {
    const from = (client: string) => ({ 'x-forwarded-for': client });
    for (let attempt = 0; attempt < 2; attempt += 1)
      await request(gateway.url)
        .get('/admin/v1/programs')
        .set(from('203.0.113.7'))
        .set(bearer(`wrong-${attempt}`))
        .expect(401);
    await request(gateway.url).get('/admin/v1/programs').set(from('203.0.113.7')).set(bearer('wrong-2')).expect(429);
    await request(gateway.url).get('/admin/v1/programs').set(from('198.51.100.9')).set(bearer('wrong-3')).expect(401);
    await request(gateway.url).get('/admin/v1/programs').set(from('203.0.113.7')).set(adminAuth).expect(200);
  } finally {
    await gateway.stop();
  }
});
